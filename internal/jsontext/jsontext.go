// Package jsontext makes the JSON text of an upstream's answer safe to keep
// and show: Redact takes the API key out of it in any spelling JSON allows,
// and Storable makes it text PostgreSQL's text and jsonb accept. The
// client applies both to every body right after reading it, before
// anything can log, store or print it.
package jsontext

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Marker replaces the API key wherever an upstream body or message
// carries it. It holds no quote or backslash, so a JSON string stays valid.
const Marker = "[REDACTED]"

// Redact replaces every occurrence of key in body, raw or in any JSON
// escaped spelling of its characters (\u0041, \u00e9, \/, a surrogate
// pair), with Marker. It returns body itself when the key is
// absent (the common case: no copy).
func Redact(body []byte, key string) []byte {
	if key == "" || len(body) == 0 {
		return body
	}
	first := key[0]
	var out []byte
	last := 0
	for i := 0; i < len(body); i++ {
		if c := body[i]; c != first && c != '\\' {
			continue
		}
		n := matchKey(body[i:], key)
		if n == 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(body))
		}
		out = append(out, body[last:i]...)
		out = append(out, Marker...)
		i += n - 1
		last = i + 1
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}

// RedactString is Redact for messages.
func RedactString(s, key string) string {
	if key == "" {
		return s
	}
	return string(Redact([]byte(s), key))
}

// matchKey returns the length of the spelling of key that b starts with, or
// 0. Each character of the key matches itself or a JSON escape of it.
func matchKey(b []byte, key string) int {
	pos := 0
	for _, r := range key {
		if pos >= len(b) {
			return 0
		}
		if r < utf8.RuneSelf && b[pos] == byte(r) {
			pos++
			continue
		}
		if r >= utf8.RuneSelf {
			var enc [utf8.UTFMax]byte
			n := utf8.EncodeRune(enc[:], r)
			if bytes.HasPrefix(b[pos:], enc[:n]) {
				pos += n
				continue
			}
		}
		if b[pos] != '\\' || pos+1 >= len(b) {
			return 0
		}
		switch e := b[pos+1]; {
		case e == 'u':
			v, ok := hexAt(b, pos+2)
			if !ok {
				return 0
			}
			if v == r {
				pos += 6
				continue
			}
			// A character beyond the BMP spelled as a surrogate pair.
			if r > 0xFFFF && v >= 0xD800 && v <= 0xDBFF && pos+11 < len(b) && b[pos+6] == '\\' && b[pos+7] == 'u' {
				if lo, ok := hexAt(b, pos+8); ok && utf16Pair(v, lo) == r {
					pos += 12
					continue
				}
			}
			return 0
		case shortEscape(e) == r:
			pos += 2
		default:
			return 0
		}
	}
	return pos
}

func hexAt(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	return hex4(b[i : i+4])
}

func utf16Pair(hi, lo rune) rune {
	if lo < 0xDC00 || lo > 0xDFFF {
		return -1
	}
	return (hi-0xD800)<<10 + (lo - 0xDC00) + 0x10000
}

// shortEscape is the character a two-character JSON escape stands for.
func shortEscape(e byte) rune {
	switch e {
	case '"', '\\', '/':
		return rune(e)
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return -1
}

// Storable makes a body storable in PostgreSQL, whose text and jsonb refuse
// what JSON and Go accept: the escape \u0000 (NUL) and lone UTF-16
// surrogate escapes (\ud800 without its pair) become \ufffd, and invalid
// UTF-8 bytes become U+FFFD, which is what Go's decoder makes of all three
// anyway. One such character would otherwise make every write of the page
// fail. Escaped backslashes (\\u0000) are text and stay.
func Storable(body []byte) []byte {
	if !utf8.Valid(body) {
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	if !bytes.Contains(body, []byte(`\u`)) {
		return body
	}
	// The body is the client's own buffer: escapes are fixed in place.
	for i := 0; i+5 < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		if body[i+1] != 'u' {
			i++ // an escaped character: \\u0000 stays text
			continue
		}
		r, ok := hex4(body[i+2 : i+6])
		bad := false
		switch {
		case !ok:
		case r == 0 || (r >= 0xDC00 && r <= 0xDFFF): // NUL, or a low surrogate without its high one
			bad = true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
				if lo, ok := hex4(body[i+8 : i+12]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11 // a valid pair
					continue
				}
			}
			bad = true
		}
		if bad {
			copy(body[i+2:i+6], "fffd")
		}
		i += 5
	}
	return body
}

// hex4 decodes the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	v, err := strconv.ParseUint(string(b), 16, 16)
	return rune(v), err == nil
}
