package api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Params reads a request's parameters in the order a handler asks for them
// and keeps the first error: a read after a failed one returns a zero value
// and checks nothing, so a handler reads all it needs, then answers Err,
// as checking each read in turn would. An optional parameter sent empty is
// the same as absent; a required one sent empty is missing.
type Params struct {
	v   url.Values
	err error
}

// NewParams reads v.
func NewParams(v url.Values) *Params { return &Params{v: v} }

// Err is the first error of the reads.
func (p *Params) Err() error { return p.err }

// OK reports whether no read failed so far.
func (p *Params) OK() bool { return p.err == nil }

// Keep keeps err if it is the first, and reports whether there is none.
func (p *Params) Keep(err error) bool {
	if p.err == nil {
		p.err = err
	}
	return p.err == nil
}

// Fail keeps an error of the request's parameters.
func (p *Params) Fail(format string, args ...any) { p.Keep(BadRequest(format, args...)) }

// Get is the value of name as sent ("" when absent).
func (p *Params) Get(name string) string { return p.v.Get(name) }

// Has reports whether name was sent.
func (p *Params) Has(name string) bool { return p.v.Has(name) }

// Required is the value of name, which must not be empty.
func (p *Params) Required(name string) string {
	v := p.v.Get(name)
	if v == "" && p.OK() {
		p.Fail("missing required parameter %q", name)
	}
	return p.value(v)
}

// value is v while no read failed, else "".
func (p *Params) value(v string) string {
	if !p.OK() {
		return ""
	}
	return v
}

// Offset reads a cursor: absent or empty is 0, otherwise 1 to 18 decimal
// digits (no sign, no spaces, no exponent).
func (p *Params) Offset(name string) int64 {
	v := p.v.Get(name)
	if v == "" || !p.OK() {
		return 0
	}
	n, ok := ParseDigits(v)
	if !ok {
		p.Fail("parameter %q must be a non-negative integer offset", name)
	}
	return n
}

// Handle reads a handle parameter: required, and the upstream does not
// strip a leading '@' (the spec says "without @"), so one is rejected.
func (p *Params) Handle(name string) string {
	h := p.Required(name)
	if h != "" && h[0] == '@' {
		p.Fail("parameter %q must be given without the leading @", name)
	}
	return p.value(h)
}

// Bool reads an optional true/false parameter.
func (p *Params) Bool(name string) bool {
	switch p.v.Get(name) {
	case "", "false":
		return false
	case "true":
		return p.OK()
	}
	p.Fail("parameter %q must be true or false", name)
	return false
}

// Enum reads an optional parameter that takes one of values.
func (p *Params) Enum(name string, values []string) string {
	v := p.v.Get(name)
	if v != "" && !slices.Contains(values, v) {
		p.Fail("parameter %q must be one of %s", name, strings.Join(values, ", "))
	}
	return p.value(v)
}

// Country reads an optional two-letter country code, either case.
func (p *Params) Country(name string) string {
	v := p.v.Get(name)
	if v != "" && !IsCountryCode(v) {
		p.Fail("parameter %q must be a two-letter country code", name)
	}
	return p.value(v)
}

// Page reads an optional page number from 1 (absent: 1).
func (p *Params) Page(name string) int64 {
	v := p.v.Get(name)
	if v == "" {
		return 1
	}
	n, ok := ParseDigits(v)
	if !ok || n < 1 {
		p.Fail("parameter %q must be an integer >= 1", name)
	}
	return n
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
