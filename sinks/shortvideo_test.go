package sinks_test

import (
	"context"
	"testing"

	"github.com/socialcrawl/crawler/sinks"
)

func TestWriteIsIdempotent(t *testing.T) {
	t.Parallel()
	pool, run := poolWithRun(t)
	b := batchOf(
		[]sinks.SVUser{
			{UniqueID: "owner", UserID: ptr("1"), SecUID: ptr("S"), Nickname: ptr("Owner"), Verified: ptr(true), Profile: true, Raw: []byte(`{"user":{"uniqueId":"owner"}}`)},
			{UniqueID: "fan", Nickname: ptr("Fan"), Verified: ptr(false), Raw: []byte(`{"uniqueId":"fan"}`)},
			{UniqueID: "fan", Nickname: ptr("Fan again"), Verified: ptr(false), Raw: []byte(`{"uniqueId":"fan","v":2}`)},
		},
		[]sinks.SVUserSnapshot{{UniqueID: "owner", FollowerCount: ptr(int64(1))}},
		[]sinks.SVFollow{{Follower: "fan", Followee: "owner", Raw: []byte(`{"uniqueId":"fan"}`)}},
	)
	write(t, pool, run, b)
	first := dump(t, pool)
	write(t, pool, run, b)
	diffDumps(t, "second write", first, dump(t, pool))
	// An entry row never overwrites what a profile said.
	write(t, pool, run, batchOf([]sinks.SVUser{{UniqueID: "owner", Nickname: ptr("owner-as-entry"), Raw: []byte(`{"uniqueId":"owner"}`)}}))
	var nick, raw string
	var secUID *string
	if err := pool.QueryRow(context.Background(), `SELECT nickname, sec_uid, raw::text FROM shortvideo.users WHERE unique_id = 'owner'`).Scan(&nick, &secUID, &raw); err != nil {
		t.Fatal(err)
	}
	if secUID == nil || *secUID != "S" || raw != `{"user": {"uniqueId": "owner"}}` {
		t.Errorf("profile data overwritten by an entry: sec_uid=%v raw=%s", secUID, raw)
	}
	// A later run updates last_seen_run but not first_seen_run.
	run2 := newRun(t, pool)
	write(t, pool, run2, b)
	var firstSeen, lastSeen int64
	if err := pool.QueryRow(context.Background(), `SELECT first_seen_run, last_seen_run FROM shortvideo.follows`).Scan(&firstSeen, &lastSeen); err != nil {
		t.Fatal(err)
	}
	if firstSeen != run || lastSeen != run2 {
		t.Errorf("follows seen runs = %d..%d, want %d..%d", firstSeen, lastSeen, run, run2)
	}
}
