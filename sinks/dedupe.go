package sinks

import (
	"cmp"
	"slices"
)

// dedupe sorts rows by key and keeps one row per key, chosen by keep (nil:
// the last): one statement may not upsert the same key twice, and a sorted
// order avoids deadlocks between workers.
func dedupe[T any](rows []T, key func(T) string, keep func(prev, next T) T) []T {
	if len(rows) < 2 {
		return rows
	}
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	w := 0
	for i := range out {
		if w > 0 && key(out[w-1]) == key(out[i]) {
			if keep != nil {
				out[w-1] = keep(out[w-1], out[i])
			} else {
				out[w-1] = out[i]
			}
			continue
		}
		out[w] = out[i]
		w++
	}
	return out[:w]
}

// coalesce is SQL's COALESCE for two values: next unless it is nil.
func coalesce[T any](next, prev *T) *T {
	if next != nil {
		return next
	}
	return prev
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
