package sources

import (
	"bytes"
	"encoding/json"
)

// Helpers for the wire structs of the typed calls: the real service spells
// some fields in camelCase and others in snake_case, so a wire struct decodes
// both and these pick the first one present.

// firstInt returns the first valid counter.
func firstInt(vs ...Int64) Int64 {
	for _, v := range vs {
		if v.Valid {
			return v
		}
	}
	return Int64{}
}

// firstFlag returns the first valid flag.
func firstFlag(vs ...Flag) Flag {
	for _, f := range vs {
		if f.Valid {
			return f
		}
	}
	return Flag{}
}

// firstNull returns the first non-empty value, else the first non-null one
// (an empty string the upstream did send), else null.
func firstNull(vs ...NullText) NullText {
	for _, v := range vs {
		if v.Valid && v.V != "" {
			return v
		}
	}
	for _, v := range vs {
		if v.Valid {
			return v
		}
	}
	return NullText{}
}

// looseText reads a member that is a string on one variant and an object on
// another (a caption, an address): a string or number gives its text, an
// object or array its compact JSON, null or absence gives null.
type looseText NullText

func (t *looseText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		*t = looseText{V: buf.String(), Valid: true}
		return nil
	}
	var n NullText
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = looseText(n)
	return nil
}

// object is a nested member decoded only when it is a JSON object: null, a
// string or a number in its place (seen where one variant flattens what
// another nests) leaves V zero instead of failing the whole page. The raw
// item keeps whatever was there.
type object[T any] struct {
	V  T
	OK bool
}

func (o *object[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		*o = object[T]{}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = object[T]{V: v, OK: true}
	return nil
}

// countEdge is the {"count": N} object of the photo-sharing profile.
type countEdge struct {
	Count Int64 `json:"count"`
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
