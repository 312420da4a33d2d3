package sinks_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/pgtest"
	"github.com/socialcrawl/crawler/sinks"
)

func newRun(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO crawl.runs (job_name, job) VALUES ('t', '{}') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func write(t *testing.T, pool *pgxpool.Pool, runID int64, b *sinks.Batch) {
	t.Helper()
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error { return sinks.Write(context.Background(), tx, runID, b) })
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is the whole content of the short-video tables, with each row's
// xmin so rewrites that change nothing are visible too.
func snapshot(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	err := pool.QueryRow(context.Background(), `SELECT concat_ws('|',
		(SELECT string_agg(concat_ws(',', xmin, unique_id, user_id, sec_uid, nickname, verified, profile_fetched, raw, first_seen_run, last_seen_run), ';' ORDER BY unique_id) FROM shortvideo.users),
		(SELECT string_agg(concat_ws(',', xmin, unique_id, run_id, follower_count), ';' ORDER BY unique_id) FROM shortvideo.user_snapshots),
		(SELECT string_agg(concat_ws(',', xmin, follower, followee, raw, last_seen_run), ';' ORDER BY follower, followee) FROM shortvideo.follows))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func TestWriteIsIdempotent(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run := newRun(t, pool)
	b := &sinks.Batch{
		SVUsers: []sinks.SVUser{
			{UniqueID: "owner", UserID: ptr("1"), SecUID: ptr("S"), Nickname: ptr("Owner"), Verified: ptr(true), Profile: true, Raw: []byte(`{"user":{"uniqueId":"owner"}}`)},
			{UniqueID: "fan", Nickname: ptr("Fan"), Verified: ptr(false), Raw: []byte(`{"uniqueId":"fan"}`)},
			{UniqueID: "fan", Nickname: ptr("Fan again"), Verified: ptr(false), Raw: []byte(`{"uniqueId":"fan","v":2}`)},
		},
		SVSnapshots: []sinks.SVUserSnapshot{{UniqueID: "owner", FollowerCount: ptr(int64(1))}},
		SVFollows:   []sinks.SVFollow{{Follower: "fan", Followee: "owner", Raw: []byte(`{"uniqueId":"fan"}`)}},
	}
	write(t, pool, run, b)
	first := snapshot(t, pool)
	write(t, pool, run, b)
	if second := snapshot(t, pool); second != first {
		t.Errorf("second write changed content or rewrote rows:\n%s\n%s", first, second)
	}
	// An entry row never overwrites what a profile said.
	write(t, pool, run, &sinks.Batch{SVUsers: []sinks.SVUser{{UniqueID: "owner", Nickname: ptr("owner-as-entry"), Raw: []byte(`{"uniqueId":"owner"}`)}}})
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
