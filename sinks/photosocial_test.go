package sinks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/socialcrawl/crawler/sinks"
)

func TestCommentKeyStable(t *testing.T) {
	t.Parallel()
	// The documented layout: each field length-prefixed (uvarint), the time
	// in decimal. Stored keys depend on it: it must never change.
	sum := sha256.Sum256([]byte("\x06ABC123" + "\x05alice" + "\x0a1735689600" + "\x05hello"))
	want := hex.EncodeToString(sum[:])
	for range 3 {
		if got := sinks.CommentKey("ABC123", "alice", 1735689600, "hello"); got != want {
			t.Fatalf("CommentKey = %s, want %s", got, want)
		}
	}
}

func TestCommentKeyDistinct(t *testing.T) {
	t.Parallel()
	type c struct {
		code, user string
		at         int64
		text       string
	}
	comments := []c{
		{"ABC", "alice", 100, "hello"},
		{"ABD", "alice", 100, "hello"},  // other post
		{"ABC", "bob", 100, "hello"},    // other author
		{"ABC", "alice", 101, "hello"},  // other time
		{"ABC", "alice", 100, "hello!"}, // other text
		{"ABC", "alice", 100, ""},
		{"AB", "Calice", 100, "hello"}, // same bytes, other split
		{"ABCalice", "", 100, "hello"},
		{"ABC", "alice1", 0, "hello"},
		{"ABC", "alice", 10, "0hello"},
	}
	seen := map[string]c{}
	for _, cm := range comments {
		k := sinks.CommentKey(cm.code, cm.user, cm.at, cm.text)
		if len(k) != 64 {
			t.Errorf("key %q: want 64 hex digits", k)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("%+v and %+v share key %s", prev, cm, k)
		}
		seen[k] = cm
	}
}

func TestPostCode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://www.photosocial.example/p/ABC_c12/":         "ABC_c12",
		"https://photosocial.example/p/ABC_c12?igsh=xyz":     "ABC_c12",
		"https://www.photosocial.example/reel/DXyz-1/":       "DXyz-1",
		"https://www.photosocial.example/reels/DXyz-1/":      "DXyz-1",
		"https://www.photosocial.example/alice/p/ABC/":       "ABC",
		"  https://www.photosocial.example/tv/T1/  ":         "T1",
		"https://www.photosocial.example/alice/":             "",
		"https://www.photosocial.example/p/":                 "",
		"not a url at all %zz":                               "",
		"https://www.photosocial.example/explore/p-tags/ABC": "",
	} {
		if got := sinks.PostCode(in); got != want {
			t.Errorf("PostCode(%q) = %q, want %q", in, got, want)
		}
	}
}
