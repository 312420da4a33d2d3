package sources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Int64 is a counter decoded exactly: from a JSON integer (never through
// float64), from a string holding one, or from null (0, Valid false).
type Int64 struct {
	V     int64
	Valid bool
}

func (n *Int64) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*n = Int64{}
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			*n = Int64{}
			return nil
		}
	}
	v, err := ParseInt(s)
	if err != nil {
		return fmt.Errorf("counter %s: %w", Truncate(string(b), 40), err)
	}
	*n = Int64{V: v, Valid: true}
	return nil
}

// ParseInt accepts an integer, or a number with an integral value written
// with a fraction or exponent ("12.0", "1.2e3"), exactly. It does no
// big-number arithmetic: the input is at most MaxNumberLen characters and
// the exponent is bounded before any digit is shifted, so "1e999999999" or
// a string of thousands of digits costs no more than a short one.
func ParseInt(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	if len(s) > MaxNumberLen {
		return 0, fmt.Errorf("longer than %d characters", MaxNumberLen)
	}
	notInt := fmt.Errorf("not an integer")
	sign := ""
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = "-"
		}
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return 0, notInt
		}
		exp = e // at most MaxNumberLen digits: cannot overflow int
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" || !IsDigits(digits) {
		return 0, notInt
	}
	exp -= len(frac)
	digits = strings.TrimLeft(digits, "0")
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits, exp = digits[:len(digits)-1], exp+1
	}
	switch {
	case digits == "":
		return 0, nil
	case exp < 0:
		return 0, notInt
	case len(digits)+exp > 19:
		return 0, fmt.Errorf("out of range")
	}
	v, err := strconv.ParseInt(sign+digits+strings.Repeat("0", exp), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}

// Flag is a boolean that also accepts 0/1 and "true"/"false" strings; null
// decodes as false with Valid false.
type Flag struct {
	V     bool
	Valid bool
}

func (f *Flag) UnmarshalJSON(b []byte) error {
	switch s := strings.Trim(string(bytes.TrimSpace(b)), `"`); strings.ToLower(s) {
	case "true", "1":
		*f = Flag{V: true, Valid: true}
	case "false", "0", "":
		*f = Flag{V: false, Valid: true}
	case "null":
		*f = Flag{}
	default:
		return fmt.Errorf("flag %s: not a boolean", Truncate(string(b), 40))
	}
	return nil
}

// Cursor is a pagination cursor that arrives as a string or a number. A
// numeric cursor keeps its integer digits so it is sent back as "1740000000",
// never "1.74e+09".
type Cursor string

func (c *Cursor) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if s, ok, err := stringOrNull(b); ok {
		if err == nil {
			*c = Cursor(s)
		}
		return err
	}
	v, err := ParseInt(string(b))
	if err != nil {
		return fmt.Errorf("cursor %s: %w", Truncate(string(b), 40), err)
	}
	*c = Cursor(strconv.FormatInt(v, 10))
	return nil
}

// stringOrNull decodes b (trimmed) when it is a JSON string, or null as "";
// ok is false for any other value, which the caller reads its own way.
func stringOrNull(b []byte) (s string, ok bool, err error) {
	switch {
	case string(b) == "null":
		return "", true, nil
	case len(b) > 0 && b[0] == '"':
		err = json.Unmarshal(b, &s)
		return s, true, err
	}
	return "", false, nil
}

// Text is a string that tolerates null and numbers (ids sometimes arrive as
// numbers); a number keeps its exact digits.
type Text string

func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if s, ok, err := stringOrNull(b); ok {
		if err == nil {
			*t = Text(s)
		}
		return err
	}
	if len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		*t = Text(b)
		return nil
	}
	return fmt.Errorf("text %s: not a string", Truncate(string(b), 40))
}

// NullText is a string that may be null; Valid tells them apart.
type NullText struct {
	V     string
	Valid bool
}

func (t *NullText) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*t = NullText{}
		return nil
	}
	var s Text
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = NullText{V: string(s), Valid: true}
	return nil
}

// Credits are the accounting fields the real service adds to bodies.
type Credits struct {
	Remaining Int64 `json:"credits_remaining"`
	Charged   Int64 `json:"credits_charged"`
}

// RawRef is a JSON value left undecoded, like json.RawMessage, but aliasing
// the bytes it was decoded from instead of copying them: a body is held
// once, and what is cut from it (an item's raw JSON) points into it.
type RawRef []byte

func (r *RawRef) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// envelope holds the top-level members of a response body, undecoded.
type envelope map[string]RawRef

// Answer is a 2xx body with its envelope parsed once, by the client, for
// the credits it reports; an endpoint's decoder reads the members from it
// rather than parsing the body again.
type Answer struct {
	body []byte
	env  envelope
	err  error // why the body is not a JSON object (env is nil)
}

// answer is client.go's name for Answer, kept while package concurrency's
// change to that file is merged.
type answer = Answer

// Body is the answer's body, its key redacted: the client's buffer, which
// decoded values may alias.
func (a *Answer) Body() []byte { return a.body }

// Err is why the body is not a JSON object, nil when it is.
func (a *Answer) Err() error { return a.err }

// Member is the first of the body's top-level members present (and not
// null) among names.
func (a *Answer) Member(names ...string) (json.RawMessage, bool) { return a.env.first(names...) }

// Credits are the accounting fields the body carries.
func (a *Answer) Credits() Credits { return a.env.credits() }

func newAnswer(body []byte) *Answer {
	env, err := parseEnvelope(body)
	return &Answer{body: body, env: env, err: err}
}

func parseEnvelope(body []byte) (envelope, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("malformed body: %w", err)
	}
	if env == nil {
		return nil, fmt.Errorf("malformed body: not an object")
	}
	return env, nil
}

// first returns the first member present (and not null) among names.
func (e envelope) first(names ...string) (json.RawMessage, bool) {
	for _, n := range names {
		if raw, ok := e[n]; ok && string(raw) != "null" {
			return json.RawMessage(raw), true
		}
	}
	return nil, false
}

// envelopeKeys are the members the real service adds around the data.
var envelopeKeys = map[string]bool{"success": true, "credits_remaining": true, "credits_charged": true,
	"status": true, "message": true, "cached": true, "cached_at": true}

// dataless reports a body of envelope members only (the real service's
// {"success":true} for a private photo-sharing profile): like an empty
// body, an answer without data, not charged.
func (e envelope) dataless() bool {
	if len(e) == 0 {
		return false // not an object, or {} (isEmptyBody)
	}
	for k := range e {
		if !envelopeKeys[k] {
			return false
		}
	}
	return true
}

// allNull reports a body whose data members are all null, or objects of
// nulls: how the real service sometimes answers "not found" with a
// charged 200.
func (e envelope) allNull() bool {
	n := 0
	for k, v := range e {
		if envelopeKeys[k] {
			continue
		}
		if n++; !nullLike(v, 0) {
			return false
		}
	}
	return n > 0
}

// nullObjectMax bounds the objects nullLike reads.
const nullObjectMax = 4 << 10

// nullLike: null, or an object whose members are all nullLike (to a small
// depth: the body passed checkShape, this only looks a few levels in).
func nullLike(raw []byte, depth int) bool {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return true
	}
	// An object of nulls is small: a large one is data, and is not read
	// again (a body of a few MB would cost a scan per level).
	if depth > 3 || len(raw) == 0 || raw[0] != '{' || len(raw) > nullObjectMax {
		return false
	}
	var m map[string]RawRef
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return false
	}
	for _, v := range m {
		if !nullLike(v, depth+1) {
			return false
		}
	}
	return true
}

// free reports a 2xx answer that costs nothing. What it says it charged
// decides (charged, or absurd: a charge refused and billed as 1): free only
// at 0, even marked cached or holding envelope members only. An answer
// that says no charge is free when it is empty, of envelope members only
// or served from the upstream's cache (the documented free answers).
func (a *Answer) free(charged Int64, absurd bool) bool {
	switch {
	case absurd:
		return false
	case charged.Valid:
		return charged.V == 0
	}
	return isEmptyBody(a.body) || a.env.dataless() || a.env.cached()
}

// cached reports an answer marked as served from the upstream's cache.
func (e envelope) cached() bool {
	var f Flag
	raw, ok := e["cached"]
	return ok && f.UnmarshalJSON(raw) == nil && f.V
}

func (e envelope) credits() Credits {
	var c Credits
	if raw, ok := e["credits_remaining"]; ok {
		_ = c.Remaining.UnmarshalJSON(raw)
	}
	if raw, ok := e["credits_charged"]; ok {
		_ = c.Charged.UnmarshalJSON(raw)
	}
	return c
}

// Item is a decoded list entry with its raw JSON kept.
type Item[T any] struct {
	V   T
	Raw json.RawMessage
	// Pos is the entry's 0-based position in the page's list as sent,
	// dropped entries included: ranks stay the platform's.
	Pos int
}

// Page is one page of a list endpoint.
type Page[T any] struct {
	Items []Item[T]
	// Cursor is the cursor to send for the next page ("" when none).
	Cursor string
	// HasMore is the upstream's flag; HasMoreKnown is false when the body
	// carried none (comments, some real-service lists).
	HasMore      bool
	HasMoreKnown bool
	// Dropped counts the list's entries that are not objects (null, a
	// string...) or do not decode; DropReason says why the last one was.
	// They are not in Items, but pagination counts them: a page of only
	// dropped entries is not an empty page.
	Dropped    int
	DropReason string
	Credits    Credits
	Raw        json.RawMessage
}

// CursorKeys are the members a list's next cursor is read from, the first
// present: the contract's "cursor", then the platform's own names.
var CursorKeys = []string{"cursor", "next_cursor", "max_cursor"}

// moreKeys are the members a list's has-more flag is read from.
var moreKeys = []string{"hasMore", "has_more"}

// PageShape says where a page keeps its parts: its entries under the first
// of Lists present, its next cursor under the first of Cursors (CursorKeys
// when nil), its has-more flag under the first of More (hasMore or
// has_more when nil).
type PageShape struct {
	Lists, Cursors, More []string
}

// DecodePage decodes a list body whose items are under one of listKeys.
func DecodePage[T any](a *Answer, listKeys ...string) (*Page[T], error) {
	return DecodeShapedPage[T](a, PageShape{Lists: listKeys})
}

// DecodeShapedPage decodes a list body of the given shape.
func DecodeShapedPage[T any](a *Answer, shape PageShape) (*Page[T], error) {
	if a.err != nil {
		return nil, a.err
	}
	env, listKeys, cursors, more := a.env, shape.Lists, shape.Cursors, shape.More
	if cursors == nil {
		cursors = CursorKeys
	}
	if more == nil {
		more = moreKeys
	}
	p := &Page[T]{Raw: json.RawMessage(a.body), Credits: env.credits()}
	if raw, ok := env.first(listKeys...); ok {
		var raws []RawRef
		if err := json.Unmarshal(raw, &raws); err != nil {
			return nil, fmt.Errorf("%s: not a list: %w", listKeys[0], err)
		}
		p.Items, p.Dropped, p.DropReason = DecodeItems[T](raws, listKeys[0])
	}
	if raw, ok := env.first(cursors...); ok {
		var c Cursor
		if err := c.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		p.Cursor = string(c)
	}
	if raw, ok := env.first(more...); ok {
		var f Flag
		if err := f.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		p.HasMore, p.HasMoreKnown = f.V, true
	}
	return p, nil
}

// DecodeItems decodes the entries of a list, leniently: one bad entry costs
// only itself, never the page (whose retry would be billed and fail the
// same way); dropped counts them, reason says why the last one was.
func DecodeItems[T any](raws []RawRef, list string) (items []Item[T], dropped int, reason string) {
	items = make([]Item[T], 0, len(raws))
	for i, r := range raws {
		if t := bytes.TrimSpace(r); len(t) == 0 || t[0] != '{' {
			dropped, reason = dropped+1, fmt.Sprintf("%s[%d]: %s entry", list, i, jsonKind(t))
			continue
		}
		var v T
		if err := json.Unmarshal(r, &v); err != nil {
			dropped, reason = dropped+1, fmt.Sprintf("%s[%d]: %s", list, i, Truncate(err.Error(), 200))
			continue
		}
		items = append(items, Item[T]{V: v, Raw: json.RawMessage(r), Pos: i})
	}
	return items, dropped, reason
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case 'n':
		return "null"
	case '"':
		return "string"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}
