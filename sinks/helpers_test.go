package sinks_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// poolWithRun is a database of the test's own and a run in it.
func poolWithRun(t testing.TB) (*pgxpool.Pool, int64) {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	return pool, newRun(t, pool)
}

func newRun(t testing.TB, pool *pgxpool.Pool) int64 {
	t.Helper()
	var id int64
	if err := pool.QueryRow(context.Background(), `INSERT INTO crawl.runs (job_name, job) VALUES ('t', '{}') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func writeTx(ctx context.Context, pool *pgxpool.Pool, runID int64, b *sinks.Batch) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return writeIn(ctx, tx, runID, b) })
}

// writeIn applies b for run runID inside tx in one round trip, as the
// frontier's commit sends a page's rows (sinks.Queue, sinks.Results).
func writeIn(ctx context.Context, tx pgx.Tx, runID int64, b *sinks.Batch) error {
	var batch pgx.Batch
	labels := sinks.Queue(&batch, runID, b)
	if len(labels) == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, &batch)
	if err := sinks.Results(br, labels); err != nil {
		br.Close()
		return err
	}
	return br.Close()
}

func write(t testing.TB, pool *pgxpool.Pool, runID int64, b *sinks.Batch) {
	t.Helper()
	if err := writeTx(context.Background(), pool, runID, b); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// query returns the first column of the rows of sql, as text, joined by ";".
func query(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var v *string
		err := row.Scan(&v)
		if v == nil {
			return "<nil>", err
		}
		return *v, err
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return strings.Join(vals, ";")
}

// dump is the whole content of every table of the crawl, shortvideo and
// photosocial schemas, by table: each row's xmin and text in primary-key
// order. Equal dumps mean equal content and no row rewritten, not even with
// the same values.
func dump(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `
		SELECT c.oid::regclass::text,
		       (SELECT string_agg(format('t.%I', a.attname), ', ' ORDER BY k.ord)
		        FROM pg_index i
		        CROSS JOIN unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
		        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		        WHERE i.indrelid = c.oid AND i.indisprimary)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('crawl', 'shortvideo', 'photosocial') AND c.relkind = 'r'
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	type tbl struct{ Name, PK string }
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[tbl])
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(tables))
	for _, tb := range tables {
		if tb.PK == "" {
			t.Fatalf("table %s has no primary key", tb.Name)
		}
		var s string
		// Names come from the catalog: regclass output is quoted as needed.
		sql := fmt.Sprintf(`SELECT coalesce(string_agg(t.xmin::text || ' ' || t::text, E'\n' ORDER BY %s), '') FROM %s t`, tb.PK, tb.Name)
		if err := pool.QueryRow(ctx, sql).Scan(&s); err != nil {
			t.Fatalf("dump %s: %v", tb.Name, err)
		}
		out[tb.Name] = s
	}
	return out
}

// diffDumps reports the tables whose content differs.
func diffDumps(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range before {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		if before[name] != after[name] {
			t.Errorf("%s changed %s:\nbefore:\n%s\nafter:\n%s", what, name, before[name], after[name])
		}
	}
	if len(before) != len(after) {
		t.Errorf("%s: %d tables before, %d after", what, len(before), len(after))
	}
}

// rewriteEveryWay writes batch() for run three ways (whole, shuffled, one
// row per batch) and fails on any change to the dump want.
func rewriteEveryWay(t testing.TB, pool *pgxpool.Pool, run int64, batch func() *sinks.Batch, want map[string]string, what string) {
	t.Helper()
	write(t, pool, run, batch())
	diffDumps(t, what, want, dump(t, pool))

	write(t, pool, run, shuffled(rand.New(rand.NewPCG(1, 2)), batch()))
	diffDumps(t, what+" shuffled", want, dump(t, pool))

	batch().Each(func(_ string, rows []any) {
		for _, r := range rows {
			var one sinks.Batch
			one.AddRow(r)
			write(t, pool, run, &one)
		}
	})
	diffDumps(t, what+" row by row", want, dump(t, pool))
}

// fullBatch has rows for every table. Batches of different v have the same
// keys and different values (counters, raw), so writing one after another
// updates every row.
func fullBatch(v int) *sinks.Batch {
	raw := func(format string, args ...any) []byte {
		return fmt.Appendf(nil, `{"v": %d, "x": %q}`, v, fmt.Sprintf(format, args...))
	}
	n := func(base int64) *int64 { return ptr(base + int64(v)) }
	return batchOf(
		[]sinks.SVUser{
			{UniqueID: "owner", UserID: ptr("1"), SecUID: ptr("S1"), Nickname: ptr("Owner"), Verified: ptr(true), Private: ptr(false), Profile: true, Raw: raw("owner")},
			{UniqueID: "fan", Nickname: ptr("Fan"), Verified: ptr(false), Raw: raw("fan")},
			{UniqueID: "creator", Nickname: ptr("Creator"), Verified: ptr(true), Raw: raw("creator")},
			{UniqueID: "found", Nickname: ptr("Found"), Raw: raw("found")},
		},
		[]sinks.SVUserSnapshot{{UniqueID: "owner", FollowerCount: n(100), FollowingCount: n(10), HeartCount: n(1000), VideoCount: n(5), DiggCount: n(7)}},
		[]sinks.SVFollow{{Follower: "fan", Followee: "owner", Raw: raw("fan")}},
		[]sinks.SVVideo{
			{VideoID: "7001", AuthorUniqueID: ptr("owner"), Description: ptr("first #cats"), CreateTime: ptr(int64(1735000000)), SongID: ptr("6001"), Raw: raw("v1")},
			{VideoID: "7002", AuthorUniqueID: ptr("someone"), Description: ptr("second"), CreateTime: ptr(int64(1735000100)), Raw: raw("v2")},
			{VideoID: "7003", Description: ptr("trimmed"), Partial: true, Raw: raw("v3")},
		},
		[]sinks.SVVideoSnapshot{
			{VideoID: "7001", PlayCount: n(1000), DiggCount: n(100), CommentCount: n(10), ShareCount: n(1)},
			{VideoID: "7002", PlayCount: n(2000), DiggCount: n(200)},
			{VideoID: "7003", PlayCount: n(3000)},
		},
		[]sinks.SVHashtag{
			{Name: "cats", Raw: raw("cats")},
			{Name: "dogs", Partial: true, Raw: raw("dogs")},
		},
		[]sinks.SVHashtagSnapshot{
			{Name: "cats", ViewCount: n(1e6), VideoCount: n(1e3), Growth: fmt.Appendf(nil, `{"views7d": %d}`, 70+v)},
			{Name: "dogs", ViewCount: n(5e5)},
		},
		[]sinks.SVSong{
			{SongID: "6001", Title: ptr("Song"), AuthorName: ptr("Band"), DurationSeconds: ptr(int64(31)), CoverLargeURL: ptr("https://c/l"), CoverMediumURL: ptr("https://c/m"), CoverThumbURL: ptr("https://c/t"), PlayURL: ptr("https://c/p"), Raw: raw("s1")},
			{SongID: "6002", Title: ptr("Sound"), Partial: true, Raw: raw("s2")},
		},
		[]sinks.SVSongSnapshot{{SongID: "6001", UsageCount: n(42)}},
		[]sinks.SVSongVideo{
			{SongID: "6001", VideoID: "7001"},
			{SongID: "6001", VideoID: "7002"},
			{SongID: "6099", VideoID: "7003"}, // a song never fetched: no row in songs
		},
		[]sinks.SVVideoHashtag{{VideoID: "7001", Name: "cats"}, {VideoID: "7003", Name: "dogs"}},
		[]sinks.SVProfileVideo{{UniqueID: "owner", VideoID: "7001"}, {UniqueID: "never_fetched", VideoID: "7002"}},
		[]sinks.SVComment{
			{CommentID: "c701", VideoID: "7001", AuthorUniqueID: ptr("fan"), Text: "first!", CreateTime: ptr(int64(1735000500)), DiggCount: n(4), ReplyCount: n(1), Raw: raw("c701")},
			{CommentID: "c702", VideoID: "7001", ParentID: ptr("c701"), Text: "reply", DiggCount: n(0), Raw: raw("c702")},
			{CommentID: "c703", VideoID: "7999", Text: "on a video not stored", Raw: raw("c703")},
		},
		[]sinks.SVTranscript{
			{VideoID: "7001", VideoURL: "https://www.tiktok.com/@owner/video/7001", Text: ptr("WEBVTT\n\n00:00.000 --> 00:01.000\nhi"), HasSpeech: true, Raw: raw("t7001")},
			{VideoID: "7002", VideoURL: "https://www.tiktok.com/@someone/video/7002", Raw: raw("t7002")},
		},
		[]sinks.SVSearchResult{
			{Kind: sinks.SearchKeyword, QueryKey: "cats", Rank: 1, Type: sinks.ResultVideo, VideoID: ptr("7001"), Raw: raw("k1")},
			{Kind: sinks.SearchKeyword, QueryKey: "cats", Rank: 2, Type: sinks.ResultVideo, VideoID: ptr("7002"), Raw: raw("k2")},
			{Kind: sinks.SearchHashtag, QueryKey: "cats", Rank: 1, Type: sinks.ResultHashtag, HashtagName: ptr("cats"), Raw: raw("h1")},
			{Kind: sinks.SearchTop, QueryKey: "cats mixed", Rank: 1, Type: sinks.ResultVideo, VideoID: ptr("7003"), Raw: raw("t1")},
			{Kind: sinks.SearchTop, QueryKey: "cats mixed", Rank: 2, Type: sinks.ResultUser, UniqueID: ptr("found"), Raw: raw("t2")},
			{Kind: sinks.SearchTop, QueryKey: "cats mixed", Rank: 3, Type: sinks.ResultHashtag, HashtagName: ptr("dogs"), Raw: raw("t3")},
			{Kind: sinks.SearchTop, QueryKey: "cats mixed", Rank: 4, Type: sinks.ResultSound, SongID: ptr("6002"), Raw: raw("t4")},
			{Kind: sinks.SearchTop, QueryKey: "cats mixed", Rank: 5, Type: "live", Raw: raw("t5")}, // a kind not in the contract
		},
		[]sinks.SVFeedEntry{
			{Feed: sinks.FeedTrending, Rank: 1, VideoID: "7001", Raw: raw("f1")},
			{Feed: sinks.FeedTrending, Rank: 2, VideoID: "7002", Raw: raw("f2")},
			{Feed: sinks.FeedPopularVideos, Rank: 1, VideoID: "7002", Raw: raw("p1")},
		},
		[]sinks.SVPopularCreator{{Rank: 1, UniqueID: "creator", FollowerCount: n(5e6), Verified: ptr(true), Raw: raw("creator")}},
		[]sinks.SVLiveStatus{
			{UniqueID: "owner", IsLive: ptr(true), Title: ptr("on air"), ViewerCount: n(12), StartTime: ptr(int64(1735689000)), Raw: raw("live")},
			{UniqueID: "fan", IsLive: ptr(false), Title: ptr(""), ViewerCount: ptr(int64(0)), StartTime: ptr(int64(0)), Raw: raw("off")},
		},
		[]sinks.PSUser{
			{Username: "shop_business", UserID: ptr("900"), FullName: ptr("Shop"), Biography: ptr("we sell"), Verified: ptr(false), Private: ptr(false), BusinessAccount: ptr(true),
				Category: ptr("Retail"), ContactEmail: ptr("a@shop.example"), ContactPhone: ptr("+100"), ContactAddress: ptr("1 Main St"), Profile: true, Raw: raw("shop")},
			{Username: "commenter", Verified: ptr(false), Raw: raw("commenter")},
		},
		[]sinks.PSProfileSnapshot{{Username: "shop_business", FollowerCount: n(300), FollowingCount: n(30), PostCount: n(3)}},
		[]sinks.PSComment{
			{PostCode: "ABC", PostURL: "https://www.photosocial.example/p/ABC/", CommentID: ptr("c1"), Username: "commenter", Text: "nice", CreatedAt: 1735689600, LikeCount: n(3), ChildCommentCount: ptr(int64(0)), Raw: raw("c1")},
			{PostCode: "ABC", PostURL: "https://www.photosocial.example/p/ABC/", Username: "shop_business", Text: "thanks", CreatedAt: 1735689700, LikeCount: n(1), Raw: raw("c2")},
		},
		[]sinks.PSReel{
			{ReelID: "3001", Code: "DAAA", OwnerUsername: ptr("shop_business"), Caption: ptr("new in"), TakenAt: ptr(int64(1735600000)), Raw: raw("r1")},
			{ReelID: "3002", Code: "DBBB", OwnerUsername: ptr("commenter"), Raw: raw("r2")},
		},
		[]sinks.PSReelSnapshot{{ReelID: "3001", PlayCount: n(900), LikeCount: n(90)}, {ReelID: "3002", PlayCount: n(800)}},
		[]sinks.PSReelSearchResult{
			{QueryKey: "funny", Rank: 1, ReelID: "3002"},
			{QueryKey: "funny", Rank: 2, ReelID: "3001"},
		},
		[]sinks.PSTranscript{{Shortcode: "DAAA", EntryID: "e1", Text: ptr("hello there"), MediaURL: "https://www.photosocial.example/reel/DAAA/", Raw: raw("tr")}},
		[]sinks.PSTranscriptCheck{{Shortcode: "DAAA", MediaURL: "https://www.photosocial.example/reel/DAAA/", HasSpeech: true, EntryCount: 1 + v}, {Shortcode: "DQUIET", MediaURL: "https://www.photosocial.example/reel/DQUIET/"}},
		[]sinks.PSEmbed{{Username: "shop_business", HTML: ptr(`<blockquote>@shop_business</blockquote>`), Raw: raw("embed")}},
		[]sinks.PSPost{
			{Code: "DH3", PostID: ptr("3600"), URL: ptr("https://www.instagram.com/shop_business/p/DH3/"), OwnerUsername: ptr("shop_business"),
				MediaType: ptr(int64(2)), ProductType: ptr("clips"), Caption: ptr("new in"), TakenAt: ptr(int64(1735600000)), Raw: raw("p1")},
			{Code: "ABC", Raw: raw("p2")},
		},
		[]sinks.PSPostSnapshot{{Code: "DH3", LikeCount: n(387), CommentCount: n(12), PlayCount: n(35499)}, {Code: "ABC", LikeCount: n(5)}},
		[]sinks.PSProfilePost{{Username: "shop_business", Code: "DH3"}, {Username: "shop_business", Code: "ABC"}},
		[]sinks.PSProfileReel{{Username: "shop_business", ReelID: "3001"}},
		[]sinks.PSProfileHighlight{
			{Username: "shop_business", HighlightID: "17902", Position: 1, Title: ptr("Trips"), CoverURL: ptr("https://c/h"), Raw: raw("ph1")},
			{Username: "shop_business", HighlightID: "17999", Position: 2, Raw: raw("ph2")}, // never fetched in detail
		},
		[]sinks.PSHighlight{{HighlightID: "highlight:17902", Title: ptr("Trips"), MediaCount: ptr(int64(2)), OwnerUsername: ptr("shop_business"), OwnerVerified: ptr(false), Raw: raw("hl")}},
		[]sinks.PSHighlightItem{
			{HighlightID: "highlight:17902", Position: 1, ItemID: ptr("i1"), MediaType: ptr(int64(2)), VideoURL: ptr("https://v/1"), Raw: raw("i1")},
			{HighlightID: "17902", Position: 2, ItemID: ptr("i2"), MediaType: ptr(int64(1)), Raw: raw("i2")},
		},
	)
}

// batchOf is a batch of the rows of sets, each a slice of a registered row
// type ([]sinks.SVUser{...}).
func batchOf(sets ...any) *sinks.Batch {
	var b sinks.Batch
	for _, set := range sets {
		v := reflect.ValueOf(set)
		for i := range v.Len() {
			b.AddRow(v.Index(i).Interface())
		}
	}
	return &b
}

// shuffled is b with the rows of every table in a random order.
func shuffled(rng *rand.Rand, b *sinks.Batch) *sinks.Batch {
	var out sinks.Batch
	b.Each(func(_ string, rows []any) {
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for _, r := range rows {
			out.AddRow(r)
		}
	})
	return &out
}
