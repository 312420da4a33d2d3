package api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Query reads parameters. An optional parameter sent empty is the same as
// absent; a required one sent empty is missing.
type Query struct{ V url.Values }

// Params is a query of pairs of name, value; empty values are left out.
func Params(pairs ...string) Query {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	return Query{v}
}

func (q Query) Get(name string) string { return q.V.Get(name) }

func (q Query) Has(name string) bool { return q.V.Has(name) }

func (q Query) Required(name string) (string, error) {
	v := q.V.Get(name)
	if v == "" {
		return "", BadRequest("missing required parameter %q", name)
	}
	return v, nil
}

// Offset reads a cursor: absent or empty is 0, otherwise 1 to 18 decimal
// digits (no sign, no spaces, no exponent).
func (q Query) Offset(name string) (int64, error) {
	v := q.V.Get(name)
	if v == "" {
		return 0, nil
	}
	n, ok := ParseDigits(v)
	if !ok {
		return 0, BadRequest("parameter %q must be a non-negative integer offset", name)
	}
	return n, nil
}

// Handle reads a handle parameter: required, and the upstream does not
// strip a leading '@' (the spec says "without @"), so one is rejected.
func (q Query) Handle(name string) (string, error) {
	h, err := q.Required(name)
	if err != nil {
		return "", err
	}
	if h[0] == '@' {
		return "", BadRequest("parameter %q must be given without the leading @", name)
	}
	return h, nil
}

// Bool reads an optional true/false parameter.
func (q Query) Bool(name string) (bool, error) {
	switch q.V.Get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, BadRequest("parameter %q must be true or false", name)
}

// Enum reads an optional parameter that takes one of values.
func (q Query) Enum(name string, values []string) (string, error) {
	v := q.V.Get(name)
	if v != "" && !slices.Contains(values, v) {
		return "", BadRequest("parameter %q must be one of %s", name, strings.Join(values, ", "))
	}
	return v, nil
}

// Country reads an optional two-letter country code, either case.
func (q Query) Country(name string) (string, error) {
	v := q.V.Get(name)
	if v != "" && !IsCountryCode(v) {
		return "", BadRequest("parameter %q must be a two-letter country code", name)
	}
	return v, nil
}

// Page reads an optional page number from 1 (absent: 1).
func (q Query) Page(name string) (int64, error) {
	v := q.V.Get(name)
	if v == "" {
		return 1, nil
	}
	n, ok := ParseDigits(v)
	if !ok || n < 1 {
		return 0, BadRequest("parameter %q must be an integer >= 1", name)
	}
	return n, nil
}

// IsCountryCode accepts two ASCII letters, either case.
func IsCountryCode(s string) bool {
	isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	return len(s) == 2 && isLetter(s[0]) && isLetter(s[1])
}

// IsDigits accepts 1 to 30 ASCII digits: the ids the upstream writes as
// strings.
func IsDigits(s string) bool {
	return s != "" && len(s) <= 30 && strings.Trim(s, "0123456789") == ""
}

// ParseDigits accepts 1 to 18 ASCII digits, so the value and a page added
// to it never overflow int64.
func ParseDigits(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// Itoa is n in decimal.
func Itoa(n int64) string { return strconv.FormatInt(n, 10) }
