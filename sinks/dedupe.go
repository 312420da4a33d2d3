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
	// every comparison, and the sort moves indices, not rows: a group's
	// merged pages (Merge) sort thousands, and moving rows (pointers) as a
	// stable sort does costs write barriers and a copy of every row; with
	// thousands of requests in flight the collector runs all the time, so
	// what the committer allocates is CPU taken from the requests
	// (workload 21).
	keys := make([]string, len(rows))
	idx := make([]int32, len(rows))
	sorted := true
	for i, r := range rows {
		keys[i], idx[i] = key(r), int32(i)
		if i > 0 && keys[i-1] > keys[i] {
			sorted = false
		}
	}
	if !sorted {
		// Ties by position: the order a stable sort leaves.
		slices.SortFunc(idx, func(a, b int32) int { return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(a, b)) })
	}
	out := make([]T, 0, len(rows))
	for n, i := range idx {
		if n > 0 && keys[idx[n-1]] == keys[i] {
			if keep != nil {
				out[len(out)-1] = keep(out[len(out)-1], rows[i])
			} else {
				out[len(out)-1] = rows[i]
			}
			continue
		}
		out = append(out, rows[i])
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
