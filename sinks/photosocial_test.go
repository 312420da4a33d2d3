package sinks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
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

// A user object seen elsewhere never erases profile data; a later profile
// that no longer exposes contact info clears it; identity fields are only
// filled, never erased.
func TestProfileExposureAndPartialRows(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run := newRun(t, pool)
	const profile = `SELECT concat_ws('|', full_name, is_verified, is_business_account, coalesce(category_name, '-'), coalesce(contact_email, '-'),
		coalesce(contact_phone, '-'), coalesce(contact_address, '-'), profile_fetched, raw->>'src') FROM photosocial.profiles`
	write(t, pool, run, batchOf(
		[]sinks.PSUser{{Username: "shop", FullName: ptr("Shop"), Verified: ptr(false), BusinessAccount: ptr(true),
			Category: ptr("Retail"), ContactEmail: ptr("a@shop"), ContactPhone: ptr("+1"), ContactAddress: ptr("Main St"), Profile: true, Raw: []byte(`{"src": "profile"}`)}},
	))
	write(t, pool, run, batchOf([]sinks.PSUser{{Username: "shop", Verified: ptr(true), Raw: []byte(`{"src": "comment"}`)}}))
	if got, want := query(t, pool, profile), "Shop|t|t|Retail|a@shop|+1|Main St|t|profile"; got != want {
		t.Errorf("after a comment's user object: %s, want %s", got, want)
	}
	write(t, pool, run, batchOf([]sinks.PSUser{{Username: "shop", BusinessAccount: ptr(false), Profile: true, Raw: []byte(`{"src": "profile2"}`)}}))
	if got, want := query(t, pool, profile), "Shop|t|f|-|-|-|-|t|profile2"; got != want {
		t.Errorf("after a profile without contact info: %s, want %s", got, want)
	}
}

// Comments: a later page without like_count keeps the count; the same comment
// through another URL form of its post is the same row.
func TestCommentsUpsertByDerivedKey(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run := newRun(t, pool)
	c := sinks.PSComment{PostCode: sinks.PostCode("https://x.example/p/ABC/"), PostURL: "https://x.example/p/ABC/", Username: "alice", Text: "nice",
		CreatedAt: 1735689600, LikeCount: ptr(int64(4)), ChildCommentCount: ptr(int64(2)), Raw: []byte(`{"text": "nice"}`)}
	write(t, pool, run, batchOf([]sinks.PSComment{c}))
	c2 := c
	c2.PostURL, c2.PostCode = "https://x.example/reel/ABC?igsh=1", sinks.PostCode("https://x.example/reel/ABC?igsh=1")
	c2.LikeCount, c2.ChildCommentCount = nil, nil
	write(t, pool, run, batchOf([]sinks.PSComment{c2}))
	got := query(t, pool, `SELECT concat_ws('|', comment_key, post_code, post_url, like_count, child_comment_count, created_at AT TIME ZONE 'UTC') FROM photosocial.comments`)
	want := sinks.CommentKey("ABC", "alice", 1735689600, "nice") + "|ABC|https://x.example/reel/ABC?igsh=1|4|2|2025-01-01 00:00:00"
	if got != want {
		t.Errorf("comments = %s, want %s", got, want)
	}
}

// Media without speech is recorded as checked; a null text never erases a
// transcript.
func TestTranscriptChecksAndNullText(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run := newRun(t, pool)
	write(t, pool, run, batchOf(
		[]sinks.PSTranscript{{Shortcode: "DAAA", EntryID: "1", Text: ptr("hello"), MediaURL: "u1", Raw: []byte(`{"text": "hello"}`)}},
		[]sinks.PSTranscriptCheck{{Shortcode: "DAAA", MediaURL: "u1", HasSpeech: true, EntryCount: 1}, {Shortcode: "DQUIET", MediaURL: "u2"}},
	))
	write(t, pool, run, batchOf([]sinks.PSTranscript{{Shortcode: "DAAA", EntryID: "1", MediaURL: "u1", Raw: []byte(`{"text": null}`)}}))
	if got := query(t, pool, `SELECT text FROM photosocial.transcripts`); got != "hello" {
		t.Errorf("transcript text = %s, want hello", got)
	}
	if got, want := query(t, pool, `SELECT concat_ws('|', shortcode, has_speech, entry_count) FROM photosocial.transcript_checks ORDER BY shortcode`), "DAAA|t|1;DQUIET|f|0"; got != want {
		t.Errorf("checks = %s, want %s", got, want)
	}
}

// Highlight ids are stored bare, whichever form the rows carry; an item is
// replaced, not merged (an image where a video was has no video URL).
func TestHighlightsBareIDsAndItems(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run := newRun(t, pool)
	write(t, pool, run, batchOf(
		[]sinks.PSHighlight{{HighlightID: "highlight:17901", Title: ptr("Trips"), MediaCount: ptr(int64(1)), Raw: []byte(`{}`)}},
		[]sinks.PSHighlightItem{{HighlightID: "highlight:17901", Position: 1, MediaType: ptr(int64(2)), VideoURL: ptr("https://v"), Raw: []byte(`{}`)}},
	))
	write(t, pool, run, batchOf(
		[]sinks.PSHighlightItem{{HighlightID: "17901", Position: 1, MediaType: ptr(int64(1)), Raw: []byte(`{"media_type": 1}`)}},
	))
	if got, want := query(t, pool, `SELECT concat_ws('|', h.highlight_id, i.position, i.media_type, coalesce(i.video_url, '-'))
		FROM photosocial.highlights h JOIN photosocial.highlight_items i USING (highlight_id)`), "17901|1|1|-"; got != want {
		t.Errorf("highlight = %s, want %s", got, want)
	}
	if got := sinks.HighlightID("highlight:42"); got != "42" {
		t.Errorf("HighlightID = %q", got)
	}
}
