package sinks_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/socialcrawl/crawler/sinks"
)

// A trimmed list entry (only playCount) never erases what a full object said,
// in either order, within a batch or across batches of a run.
func TestPartialVideoKeepsFullerData(t *testing.T) {
	t.Parallel()
	pool, run := poolWithRun(t)
	full := func(id string) sinks.SVVideo {
		return sinks.SVVideo{VideoID: id, AuthorUniqueID: ptr("alice"), Description: ptr("hello #cats"), CreateTime: ptr(int64(1735689600)),
			SongID: ptr("6001"), Raw: []byte(`{"stats": {"playCount": 10, "diggCount": 5}}`)}
	}
	trimmed := func(id string) sinks.SVVideo {
		return sinks.SVVideo{VideoID: id, Partial: true, Raw: []byte(`{"stats": {"playCount": 11}}`)}
	}
	fullStats := func(id string) sinks.SVVideoSnapshot {
		return sinks.SVVideoSnapshot{VideoID: id, PlayCount: ptr(int64(10)), DiggCount: ptr(int64(5)), CommentCount: ptr(int64(3)), ShareCount: ptr(int64(1))}
	}
	trimmedStats := func(id string) sinks.SVVideoSnapshot {
		return sinks.SVVideoSnapshot{VideoID: id, PlayCount: ptr(int64(11))}
	}
	video := func(id string) string {
		return query(t, pool, `SELECT concat_ws('|', author_unique_id, description, create_time AT TIME ZONE 'UTC', song_id, raw_partial,
			raw->'stats'->>'playCount') FROM shortvideo.videos WHERE video_id = $1`, id)
	}
	stats := func(id string) string {
		return query(t, pool, `SELECT concat_ws('|', play_count, digg_count, comment_count, share_count)
			FROM shortvideo.video_snapshots WHERE video_id = $1`, id)
	}
	const wantVideo = "alice|hello #cats|2025-01-01 00:00:00|6001|f|10"

	// Full, then trimmed in a later page of the run.
	write(t, pool, run, batchOf([]sinks.SVVideo{full("7001")}, []sinks.SVVideoSnapshot{fullStats("7001")}))
	write(t, pool, run, batchOf([]sinks.SVVideo{trimmed("7001")}, []sinks.SVVideoSnapshot{trimmedStats("7001")}))
	if got := video("7001"); got != wantVideo {
		t.Errorf("after full then trimmed: video = %s, want %s", got, wantVideo)
	}
	if got, want := stats("7001"), "11|5|3|1"; got != want {
		t.Errorf("after full then trimmed: counters = %s, want %s (newer play count, the rest kept)", got, want)
	}

	// Trimmed first, then full: the full object takes over.
	write(t, pool, run, batchOf([]sinks.SVVideo{trimmed("7002")}))
	if got, want := video("7002"), "t|11"; got != want {
		t.Errorf("trimmed only: video = %s, want %s", got, want)
	}
	write(t, pool, run, batchOf([]sinks.SVVideo{full("7002")}))
	if got := video("7002"); got != wantVideo {
		t.Errorf("after trimmed then full: video = %s, want %s", got, wantVideo)
	}

	// Both in one batch, either order: the full object wins, counters merge.
	write(t, pool, run, batchOf(
		[]sinks.SVVideo{full("7003"), trimmed("7003"), trimmed("7004"), full("7004")},
		[]sinks.SVVideoSnapshot{fullStats("7003"), trimmedStats("7003"), trimmedStats("7004"), fullStats("7004")},
	))
	for id, wantStats := range map[string]string{"7003": "11|5|3|1", "7004": "10|5|3|1"} {
		if got := video(id); got != wantVideo {
			t.Errorf("one batch, video %s = %s, want %s", id, got, wantVideo)
		}
		if got := stats(id); got != wantStats {
			t.Errorf("one batch, counters of %s = %s, want %s", id, got, wantStats)
		}
	}
}

// Search results keep the platform's ranks as given, whatever order the rows
// come in; a page written later never renumbers earlier ones; filtered
// variants of a search rank separately.
func TestSearchRanksKeptAsGiven(t *testing.T) {
	t.Parallel()
	pool, run := poolWithRun(t)
	key := sinks.QueryKey("  Funny   CATS ", nil)
	page := func(ranks []int, ids []string, k string) *sinks.Batch {
		b := &sinks.Batch{}
		for i, id := range ids {
			sinks.Add(b, sinks.SVVideo{VideoID: id, Raw: []byte(`{}`)})
			sinks.Add(b, sinks.SVSearchResult{Kind: sinks.SearchKeyword, QueryKey: k, Rank: ranks[i],
				Type: sinks.ResultVideo, VideoID: ptr(id), Raw: fmt.Appendf(nil, `{"id": %q}`, id)})
		}
		return b
	}
	// Page 2 first and in reverse order; the video 7005 ranks twice.
	write(t, pool, run, page([]int{53, 52, 51}, []string{"7005", "7009", "7008"}, key))
	write(t, pool, run, page([]int{1, 2, 3}, []string{"7005", "7002", "7003"}, key))
	filtered := sinks.QueryKey("funny cats", url.Values{"sort_by": {"most-liked"}})
	write(t, pool, run, page([]int{1}, []string{"7009"}, filtered))

	got := query(t, pool, `SELECT rank || ':' || video_id FROM shortvideo.search_results WHERE query_key = $1 ORDER BY rank`, key)
	if want := "1:7005;2:7002;3:7003;51:7008;52:7009;53:7005"; got != want {
		t.Errorf("ranks of %q = %s, want %s", key, got, want)
	}
	if got := query(t, pool, `SELECT rank || ':' || video_id FROM shortvideo.search_results WHERE query_key = $1`, filtered); got != "1:7009" {
		t.Errorf("ranks of %q = %s, want 1:7009", filtered, got)
	}

	// Reels search: the same.
	b := &sinks.Batch{}
	for i, id := range []string{"3013", "3014"} {
		sinks.Add(b, sinks.PSReel{ReelID: id, Code: "D" + id, Raw: []byte(`{}`)})
		sinks.Add(b, sinks.PSReelSearchResult{QueryKey: "dance", Rank: 14 - i, ReelID: id})
	}
	write(t, pool, run, b)
	if got := query(t, pool, `SELECT rank || ':' || reel_id FROM photosocial.reel_search_results ORDER BY rank`); got != "13:3014;14:3013" {
		t.Errorf("reel ranks = %s, want 13:3014;14:3013", got)
	}
}

// A result row names at most one entity, the one of its type.
func TestSearchResultTypeMustMatchItsID(t *testing.T) {
	t.Parallel()
	pool, run := poolWithRun(t)
	err := writeTx(context.Background(), pool, run, batchOf(
		[]sinks.SVVideo{{VideoID: "7001", Raw: []byte(`{}`)}},
		[]sinks.SVSearchResult{{Kind: sinks.SearchTop, QueryKey: "x", Rank: 1, Type: sinks.ResultUser, VideoID: ptr("7001"), Raw: []byte(`{}`)}},
	))
	if err == nil {
		t.Fatal("a user result carrying a video id was accepted")
	}
}

func TestQueryKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query   string
		filters url.Values
		want    string
	}{
		{"cats", nil, "cats"},
		{"  Funny \t CATS\n", nil, "funny cats"},
		{"Funny Cats", url.Values{"sort_by": {"most-liked"}, "date_posted": {"this-week"}}, "funny cats?date_posted=this-week&sort_by=most-liked"},
		{"funny cats", url.Values{"region": {""}}, "funny cats"},
		{"a&b", url.Values{"region": {"US"}}, "a&b?region=US"},
	} {
		if got := sinks.QueryKey(tc.query, tc.filters); got != tc.want {
			t.Errorf("QueryKey(%q, %v) = %q, want %q", tc.query, tc.filters, got, tc.want)
		}
	}
}
