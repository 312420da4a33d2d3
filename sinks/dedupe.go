package sinks

import (
	"cmp"
	"reflect"
	"slices"
)

// dedupe sorts rows by key and keeps one row per key, chosen by keep (nil:
// the last): one statement may not upsert the same key twice, and a sorted
// order avoids deadlocks between workers.
func dedupe[T any](rows []T, key func(T) string, keep func(prev, next T) T) []T {
	if len(rows) < 2 {
		return rows
	}
	// Each key is computed once (a compound key is a new string), not at
	// every comparison: a group's merged pages (Merge) sort thousands.
	type keyed struct {
		key string
		row T
	}
	ks := make([]keyed, len(rows))
	sorted := true
	for i, r := range rows {
		ks[i] = keyed{key(r), r}
		if i > 0 && ks[i-1].key > ks[i].key {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	}
	out := make([]T, 0, len(ks))
	for i, k := range ks {
		if i > 0 && ks[i-1].key == k.key {
			if keep != nil {
				out[len(out)-1] = keep(out[len(out)-1], k.row)
			} else {
				out[len(out)-1] = k.row
			}
			continue
		}
		out = append(out, k.row)
	}
	return out
}

// preferFull is the keep of entities whose source may be trimmed: a full row
// beats a partial one of the same key in a batch, else the later wins, as
// the upsert does across batches.
func preferFull[T any](partial func(T) bool) func(prev, next T) T {
	return func(prev, next T) T {
		if !partial(prev) && partial(next) {
			return prev
		}
		return next
	}
}

// fillNil is the keep of snapshot rows whose counters a list may leave out:
// next, with each nil pointer field and each absent JSON field (optJSON)
// taken from prev, as the upsert's COALESCE does across batches of a run.
func fillNil[T any](prev, next T) T {
	p, n := reflect.ValueOf(&prev).Elem(), reflect.ValueOf(&next).Elem()
	for i := range n.NumField() {
		f := n.Field(i)
		switch {
		case f.Kind() == reflect.Pointer && f.IsNil(),
			f.Type() == reflect.TypeFor[[]byte]() && optJSON(f.Bytes()) == nil:
			f.Set(p.Field(i))
		}
	}
	return next
}

// optJSON is an optional JSON value as a text parameter (cast to jsonb in
// SQL): nil, empty and the JSON null are SQL NULL.
func optJSON(b []byte) *string {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	s := string(b)
	return &s
}
