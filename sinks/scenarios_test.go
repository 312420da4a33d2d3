package sinks_test

import (
	"slices"
	"testing"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// step is one step of a write scenario: batch written by the scenario's run
// number run (1-based; 0 is 1), or, when batch is nil, the check that query's
// rows (as query joins them) read want.
type step struct {
	run         int
	batch       *sinks.Batch
	query, want string
}

// checks are the steps that check each query of pairs (query, want, ...).
func checks(pairs ...string) []step {
	var out []step
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, step{query: pairs[i], want: pairs[i+1]})
	}
	return out
}

// writes are the steps that write each batch by run 1.
func writes(batches ...*sinks.Batch) []step {
	out := make([]step, len(batches))
	for i, b := range batches {
		out[i] = step{batch: b}
	}
	return out
}

// TestWriteScenarios plays each scenario in its own database: writes and
// the checks of what they left, in order.
func TestWriteScenarios(t *testing.T) {
	t.Parallel()
	const profile = `SELECT concat_ws('|', full_name, is_verified, is_business_account, coalesce(category_name, '-'), coalesce(contact_email, '-'),
		coalesce(contact_phone, '-'), coalesce(contact_address, '-'), profile_fetched, raw->>'src') FROM photosocial.profiles`
	comment := sinks.PSComment{PostCode: sinks.PostCode("https://x.example/p/ABC/"), PostURL: "https://x.example/p/ABC/", Username: "alice", Text: "nice",
		CreatedAt: 1735689600, LikeCount: ptr(int64(4)), ChildCommentCount: ptr(int64(2)), Raw: []byte(`{"text": "nice"}`)}
	// The same comment through another URL form of its post, without counts.
	comment2 := comment
	comment2.PostURL, comment2.PostCode = "https://x.example/reel/ABC?igsh=1", sinks.PostCode("https://x.example/reel/ABC?igsh=1")
	comment2.LikeCount, comment2.ChildCommentCount = nil, nil

	for _, sc := range []struct {
		name  string // what the scenario shows
		steps [][]step
	}{{
		// A user object seen elsewhere never erases profile data; a later
		// profile that no longer exposes contact info clears it; identity
		// fields are only filled, never erased.
		"ProfileExposureAndPartialRows", [][]step{
			writes(batchOf([]sinks.PSUser{{Username: "shop", FullName: ptr("Shop"), Verified: ptr(false), BusinessAccount: ptr(true),
				Category: ptr("Retail"), ContactEmail: ptr("a@shop"), ContactPhone: ptr("+1"), ContactAddress: ptr("Main St"), Profile: true, Raw: []byte(`{"src": "profile"}`)}})),
			writes(batchOf([]sinks.PSUser{{Username: "shop", Verified: ptr(true), Raw: []byte(`{"src": "comment"}`)}})),
			checks(profile, "Shop|t|t|Retail|a@shop|+1|Main St|t|profile"),
			writes(batchOf([]sinks.PSUser{{Username: "shop", BusinessAccount: ptr(false), Profile: true, Raw: []byte(`{"src": "profile2"}`)}})),
			checks(profile, "Shop|t|f|-|-|-|-|t|profile2"),
		},
	}, {
		// Comments: a later page without like_count keeps the count; the same
		// comment through another URL form of its post is the same row.
		"CommentsUpsertByDerivedKey", [][]step{
			writes(batchOf([]sinks.PSComment{comment}), batchOf([]sinks.PSComment{comment2})),
			checks(`SELECT concat_ws('|', comment_key, post_code, post_url, like_count, child_comment_count, created_at AT TIME ZONE 'UTC') FROM photosocial.comments`,
				sinks.CommentKey("ABC", "alice", 1735689600, "nice")+"|ABC|https://x.example/reel/ABC?igsh=1|4|2|2025-01-01 00:00:00"),
		},
	}, {
		// Media without speech is recorded as checked; a null text never
		// erases a transcript.
		"TranscriptChecksAndNullText", [][]step{
			writes(batchOf(
				[]sinks.PSTranscript{{Shortcode: "DAAA", EntryID: "1", Text: ptr("hello"), MediaURL: "u1", Raw: []byte(`{"text": "hello"}`)}},
				[]sinks.PSTranscriptCheck{{Shortcode: "DAAA", MediaURL: "u1", HasSpeech: true, EntryCount: 1}, {Shortcode: "DQUIET", MediaURL: "u2"}},
			), batchOf([]sinks.PSTranscript{{Shortcode: "DAAA", EntryID: "1", MediaURL: "u1", Raw: []byte(`{"text": null}`)}})),
			checks(`SELECT text FROM photosocial.transcripts`, "hello",
				`SELECT concat_ws('|', shortcode, has_speech, entry_count) FROM photosocial.transcript_checks ORDER BY shortcode`, "DAAA|t|1;DQUIET|f|0"),
		},
	}, {
		// Highlight ids are stored bare, whichever form the rows carry; an
		// item is replaced, not merged (an image where a video was has no
		// video URL).
		"HighlightsBareIDsAndItems", [][]step{
			writes(batchOf(
				[]sinks.PSHighlight{{HighlightID: "highlight:17901", Title: ptr("Trips"), MediaCount: ptr(int64(1)), Raw: []byte(`{}`)}},
				[]sinks.PSHighlightItem{{HighlightID: "highlight:17901", Position: 1, MediaType: ptr(int64(2)), VideoURL: ptr("https://v"), Raw: []byte(`{}`)}},
			), batchOf(
				[]sinks.PSHighlightItem{{HighlightID: "17901", Position: 1, MediaType: ptr(int64(1)), Raw: []byte(`{"media_type": 1}`)}},
			)),
			checks(`SELECT concat_ws('|', h.highlight_id, i.position, i.media_type, coalesce(i.video_url, '-'))
				FROM photosocial.highlights h JOIN photosocial.highlight_items i USING (highlight_id)`, "17901|1|1|-"),
		},
	}, {
		// A top-search hashtag or sound entry (partial) never erases a full one.
		"PartialHashtagAndSongKeepFullerData", [][]step{
			writes(batchOf(
				[]sinks.SVHashtag{{Name: "cats", Raw: []byte(`{"name": "cats", "viewCount": 9, "videoCount": 3, "growth": {"views7d": 70}}`)}},
				[]sinks.SVHashtagSnapshot{{Name: "cats", ViewCount: ptr(int64(9)), VideoCount: ptr(int64(3)), Growth: []byte(`{"views7d": 70}`)}},
				[]sinks.SVSong{{SongID: "6001", Title: ptr("Song"), AuthorName: ptr("Band"), DurationSeconds: ptr(int64(31)),
					CoverLargeURL: ptr("L"), CoverThumbURL: ptr("T"), Raw: []byte(`{"id": "6001", "title": "Song", "authorName": "Band"}`)}},
			), batchOf(
				[]sinks.SVHashtag{{Name: "cats", Partial: true, Raw: []byte(`{"type": "hashtag", "name": "cats", "viewCount": 10}`)}},
				[]sinks.SVHashtagSnapshot{{Name: "cats", ViewCount: ptr(int64(10)), Growth: []byte("null")}},
				[]sinks.SVSong{{SongID: "6001", Title: ptr("Song (remix)"), Partial: true, Raw: []byte(`{"type": "sound", "id": "6001", "title": "Song (remix)"}`)}},
			)),
			checks(`SELECT concat_ws('|', raw_partial, raw->'growth'->>'views7d') FROM shortvideo.hashtags`, "f|70",
				`SELECT concat_ws('|', view_count, video_count, growth->>'views7d') FROM shortvideo.hashtag_snapshots`, "10|3|70",
				`SELECT concat_ws('|', title, author_name, duration_seconds, cover_large_url, cover_thumb_url, raw_partial, raw->>'authorName') FROM shortvideo.songs`,
				"Song (remix)|Band|31|L|T|f|Band"),
		},
	}, {
		// Live status: one row per handle per run; startTime 0 (not live) is NULL.
		"LiveStatusHistory", [][]step{
			{{run: 1, batch: batchOf([]sinks.SVLiveStatus{{UniqueID: "bob", IsLive: ptr(false), Title: ptr(""), ViewerCount: ptr(int64(0)), StartTime: ptr(int64(0)), Raw: []byte(`{"isLive": false}`)}})}},
			{{run: 2, batch: batchOf([]sinks.SVLiveStatus{{UniqueID: "bob", IsLive: ptr(true), Title: ptr("hi"), ViewerCount: ptr(int64(7)), StartTime: ptr(int64(1735689600)), Raw: []byte(`{"isLive": true}`)}})}},
			checks(`SELECT concat_ws('|', is_live, viewer_count, coalesce((start_time AT TIME ZONE 'UTC')::text, 'null')) FROM shortvideo.live_status ORDER BY run_id`,
				"f|0|null;t|7|2025-01-01 00:00:00"),
		},
	}} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			pool, _ := pgtest.Pool(t)
			runs := map[int]int64{}
			for i, s := range slices.Concat(sc.steps...) {
				if s.batch == nil {
					if got := query(t, pool, s.query); got != s.want {
						t.Errorf("step %d: %s\n= %s, want %s", i, s.query, got, s.want)
					}
					continue
				}
				n := max(s.run, 1)
				if runs[n] == 0 {
					runs[n] = newRun(t, pool)
				}
				write(t, pool, runs[n], s.batch)
			}
		})
	}
}

func TestHighlightID(t *testing.T) {
	t.Parallel()
	if got := sinks.HighlightID("highlight:42"); got != "42" {
		t.Errorf("HighlightID = %q", got)
	}
}
