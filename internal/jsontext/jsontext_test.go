package jsontext

import (
	"encoding/json"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	const key = "sk/Ab-9é"
	for _, tc := range []struct{ in, want string }{
		{`{"message":"bad key sk/Ab-9é"}`, `{"message":"bad key [REDACTED]"}`},
		{`{"m":"sk\/Ab-9\u00e9!","k":"sk\/Ab-9\u00E9"}`, `{"m":"[REDACTED]!","k":"[REDACTED]"}`},
		{`{"m":"\u0073\u006B\u002f\u0041\u0062\u002D\u0039\u00e9"}`, `{"m":"[REDACTED]"}`},
		{`{"m":"sk/Ab-9"}`, `{"m":"sk/Ab-9"}`}, // a prefix is not the key
		{`sk/Ab-9ésk/Ab-9é`, `[REDACTED][REDACTED]`},
		{`no key here \u00`, `no key here \u00`},
	} {
		if got := string(Redact([]byte(tc.in), key)); got != tc.want {
			t.Errorf("Redact(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if !json.Valid([]byte(tc.in)) {
			continue
		}
		if !json.Valid(Redact([]byte(tc.in), key)) {
			t.Errorf("redacted %s is not JSON", tc.in)
		}
	}
	astral := "k\U0001F600y"
	if got := string(Redact([]byte(`"\ud83d\ude00 k\ud83d\ude00y"`), astral)); got != `"\ud83d\ude00 [REDACTED]"` {
		t.Errorf("surrogate pair: %s", got)
	}
}

// What PostgreSQL refuses becomes U+FFFD; everything else is left byte
// for byte, escaped backslashes and valid surrogate pairs included.
func TestStorable(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`"plain"`, `"plain"`},
		{`"a\u0000b"`, `"a\ufffdb"`},
		{`"lone high \ud800 x"`, `"lone high \ufffd x"`},
		{`"lone high at end \uD83D"`, `"lone high at end \ufffd"`},
		{`"lone low \udc00"`, `"lone low \ufffd"`},
		{`"pair \ud83d\ude00 ok"`, `"pair \ud83d\ude00 ok"`},
		{`"high then high \ud83d\ud83d\ude00"`, `"high then high \ufffd\ud83d\ude00"`},
		{`"text \\u0000 and \\ud800"`, `"text \\u0000 and \\ud800"`},
		{`"other \n\u00e9"`, `"other \n\u00e9"`},
		{"\"bad \xff byte\"", "\"bad \uFFFD byte\""},
	}
	for _, c := range cases {
		if got := string(Storable([]byte(c.in))); got != c.want {
			t.Errorf("Storable(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	if in := []byte(`{"a":"\u00e9"}`); &Storable(in)[0] != &in[0] {
		t.Error("a clean body was copied")
	}
}
