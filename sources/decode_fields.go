package sources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Helpers for the wire structs of the typed calls: the real service spells
// some fields in camelCase and others in snake_case, so a wire struct decodes
// both and these pick the first one present.

// FirstText returns the first non-empty text.
func FirstText(vs ...Text) Text {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// FirstInt returns the first valid counter.
func FirstInt(vs ...Int64) Int64 {
	for _, v := range vs {
		if v.Valid {
			return v
		}
	}
	return Int64{}
}

// FirstFlag returns the first valid flag.
func FirstFlag(vs ...Flag) Flag {
	for _, f := range vs {
		if f.Valid {
			return f
		}
	}
	return Flag{}
}

// FirstNull returns the first non-empty value, else the first non-null one
// (an empty string the upstream did send), else null.
func FirstNull(vs ...NullText) NullText {
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

// Object is a nested member decoded only when it is a JSON object: null, a
// string or a number in its place (seen where one variant flattens what
// another nests) leaves V zero instead of failing the whole page. The raw
// item keeps whatever was there.
type Object[T any] struct {
	V  T
	OK bool
}

func (o *Object[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		*o = Object[T]{}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Object[T]{V: v, OK: true}
	return nil
}

// IsDigits reports whether s is one or more ASCII digits.
func IsDigits(s string) bool {
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

// UnixTime is a timestamp in Unix seconds. The contract sends an integer (or
// a string holding one); the real service sends ISO 8601 strings in places
// ("2025-09-16T17:03:04.000Z": comments' created_at, reels' taken_at, the top
// search's create_time), which are converted. null and "" are not Valid.
type UnixTime Int64

// isoLayouts are the ISO 8601 forms read; a time without a zone is UTC.
var isoLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"}

func (u *UnixTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s, isString, err := stringOrNull(b)
	if err != nil {
		return err
	}
	if isString && strings.Contains(s, "-") && !strings.HasPrefix(s, "-") {
		for _, layout := range isoLayouts {
			if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
				*u = UnixTime{V: t.Unix(), Valid: true}
				return nil
			}
		}
		return fmt.Errorf("time %s: neither Unix seconds nor ISO 8601", Truncate(string(b), 40))
	}
	var n Int64
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	*u = UnixTime(n)
	return nil
}

// FirstTime returns the first valid time, as the counter the rows keep.
func FirstTime(vs ...UnixTime) Int64 {
	for _, v := range vs {
		if v.Valid {
			return Int64(v)
		}
	}
	return Int64{}
}
