package sources_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// These tests run the client against the sandbox over HTTP: the sandbox was
// written independently from the contract, so a field or parameter misspelled
// on either side fails here.

const sandboxKey = "sk-sandbox-compat"

type bundle struct {
	c         *sources.Client
	srv       *sandbox.Server
	responses atomic.Int64 // HTTP responses the client got
}

func setup(t *testing.T, pageSize int) *bundle {
	t.Helper()
	srv, err := sandbox.New(sandbox.Config{APIKeys: []string{sandboxKey}, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	b := &bundle{srv: srv}
	o := sources.DefaultOptions()
	o.BaseURL, o.MaxRetries = hs.URL+"/api", 0
	o.RetryInitial, o.RetryMax = sources.Duration(time.Millisecond), sources.Duration(time.Millisecond)
	b.c, err = sources.New(sources.Config{
		Options: o, APIKey: sandboxKey,
		AfterResponse: func(context.Context, sources.Outcome) { b.responses.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// usage checks the sandbox's counts against what the client saw.
func (b *bundle) usage(t *testing.T, requests, billable int64) {
	t.Helper()
	u := b.srv.Usage(sandboxKey)
	if u.Requests != requests || u.Billable != billable || b.responses.Load() != requests {
		t.Errorf("sandbox usage requests=%d billable=%d, client responses=%d; want requests=%d billable=%d",
			u.Requests, u.Billable, b.responses.Load(), requests, billable)
	}
}

func secUID(t *testing.T, c *sources.Client, handle string) string {
	t.Helper()
	p, err := sources.Do(context.Background(), c, nil, endpoints.SVProfileCall(handle))
	if err != nil {
		t.Fatal(err)
	}
	if p.User.SecUID == "" {
		t.Fatalf("profile of %s carries no secUid", handle)
	}
	return string(p.User.SecUID)
}

func TestSandboxEveryCall(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	c, ctx := b.c, context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	nonZero := func(what string, vals ...any) {
		t.Helper()
		for i, v := range vals {
			switch v := v.(type) {
			case sources.Text:
				if v == "" {
					t.Errorf("%s: field %d is empty", what, i)
				}
			case sources.Int64:
				if !v.Valid || v.V <= 0 {
					t.Errorf("%s: field %d = %+v, want > 0", what, i, v)
				}
			case sources.NullText:
				if !v.Valid || v.V == "" {
					t.Errorf("%s: field %d = %+v, want a string", what, i, v)
				}
			default:
				panic(fmt.Sprintf("nonZero: %T", v))
			}
		}
	}

	// 11 profile, 4 followers, 5 following
	prof, err := sources.Do(ctx, c, nil, endpoints.SVProfileCall("@alice_f3_g2"))
	must(err)
	nonZero("profile", prof.User.ID, prof.User.UniqueID, prof.User.SecUID, prof.User.Nickname, prof.User.AvatarLarger, prof.User.Signature, prof.Stats.HeartCount)
	if prof.Stats.FollowerCount.V != 3 || prof.Stats.FollowingCount.V != 2 || !prof.User.PrivateAccount.Valid || !prof.Stats.VideoCount.Valid {
		t.Errorf("profile stats = %+v", prof.Stats)
	}
	fol, err := sources.Do(ctx, c, nil, endpoints.SVFollowersCall(string(prof.User.SecUID), ""))
	must(err)
	fng, err := sources.Do(ctx, c, nil, endpoints.SVFollowingCall(string(prof.User.SecUID), ""))
	must(err)
	if len(fol.Items) != 3 || len(fng.Items) != 2 || fol.HasMore || !fol.HasMoreKnown {
		t.Fatalf("followers %d following %d", len(fol.Items), len(fng.Items))
	}
	for _, e := range append(fol.Items, fng.Items...) {
		if e.V.UniqueID == "" || e.V.Nickname == "" || e.V.SecUID == "" {
			t.Errorf("follow entry = %+v", e.V)
		}
	}

	checkVideos := func(what string, items []sources.Item[endpoints.SVVideo], n int) {
		t.Helper()
		if len(items) != n {
			t.Fatalf("%s: %d videos, want %d", what, len(items), n)
		}
		for _, it := range items {
			v := it.V
			nonZero(what, v.ID, v.Desc, v.Author.UniqueID, v.Stats.PlayCount)
			if !v.Stats.DiggCount.Valid || !v.CreateTime.Valid {
				t.Errorf("%s: video = %+v", what, v)
			}
		}
	}
	// 1 keyword search, form A and form B (trimmed: id, desc, playCount, author only)
	kwA, err := sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Keyword: "cats n5"}, ""))
	must(err)
	checkVideos("keyword form A", kwA.Items, 5)
	kwB, err := sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Query: "cats n5", DatePosted: "this-month", SortBy: "most-liked", Region: "fr", Trim: true}, ""))
	must(err)
	if len(kwB.Items) != 5 || kwB.Cursor != "5" || kwB.HasMore {
		t.Fatalf("form B page = %d items, cursor %q", len(kwB.Items), kwB.Cursor)
	}
	for _, it := range kwB.Items {
		nonZero("keyword form B trimmed", it.V.ID, it.V.Desc, it.V.Author.UniqueID, it.V.Stats.PlayCount)
	}
	// 2 hashtag search
	tags, err := sources.Do(ctx, c, nil, endpoints.SVHashtagSearchCall("cats n3", ""))
	must(err)
	if len(tags.Items) != 3 {
		t.Fatalf("hashtags = %d", len(tags.Items))
	}
	for _, it := range tags.Items {
		nonZero("hashtag", it.V.Name, it.V.ViewCount, it.V.VideoCount)
		if !strings.Contains(string(it.Raw), "growth") {
			t.Errorf("hashtag raw lost growth: %s", it.Raw)
		}
	}
	// 3 top search: with "mixed" the kinds cycle video, user, hashtag, sound
	top, err := sources.Do(ctx, c, nil, endpoints.SVTopSearchCall("cats mixed n8", ""))
	must(err)
	if len(top.Items) != 8 {
		t.Fatalf("top = %d", len(top.Items))
	}
	var soundID sources.Text
	for i, it := range top.Items {
		r := it.V
		want := []sources.Text{"video", "user", "hashtag", "sound"}[i%4]
		if r.Type != want {
			t.Errorf("rank %d type %q, want %q", i+1, r.Type, want)
		}
		switch r.Type {
		case "video":
			nonZero("top video", r.ID, r.Desc)
		case "user":
			nonZero("top user", r.UniqueID, r.Nickname)
		case "hashtag":
			nonZero("top hashtag", r.Name)
		case "sound":
			nonZero("top sound", r.ID, r.Title)
			soundID = r.ID
		}
	}
	// 7 song (a sound of the top search is a valid song id), 6 song videos
	song, err := sources.Do(ctx, c, nil, endpoints.SVSongCall(string(soundID)))
	must(err)
	nonZero("song", song.ID, song.Title, song.AuthorName, song.Duration, song.UsageCount, song.CoverLarge, song.CoverThumb)
	if song.ID != soundID || !strings.Contains(string(song.Raw), "playUrl") {
		t.Errorf("song = %+v", song)
	}
	sv, err := sources.Do(ctx, c, nil, endpoints.SVSongVideosCall("song_v4", ""))
	must(err)
	checkVideos("song videos", sv.Items, 4)
	// 8, 9 feeds, 10 creators
	for name, call := range map[string]sources.Call[*sources.Page[endpoints.SVVideo]]{
		"trending": endpoints.SVTrendingFeedCall(), "popular": endpoints.SVPopularVideosCall(),
	} {
		p, err := sources.Do(ctx, c, nil, call)
		must(err)
		checkVideos(name, p.Items, sandbox.FeedSize)
		if p.Cursor != "" || p.HasMoreKnown {
			t.Errorf("%s paginates", name)
		}
	}
	cr, err := sources.Do(ctx, c, nil, endpoints.SVPopularCreatorsCall())
	must(err)
	if len(cr.Items) != sandbox.FeedSize {
		t.Fatalf("creators = %d", len(cr.Items))
	}
	for _, it := range cr.Items {
		nonZero("creator", it.V.UniqueID, it.V.Nickname)
		if !it.V.FollowerCount.Valid || !it.V.Verified.Valid {
			t.Errorf("creator = %+v", it.V)
		}
	}
	// 12 live
	live, err := sources.Do(ctx, c, nil, endpoints.SVLiveCall("@bob_live"))
	must(err)
	nonZero("live", live.Title, live.ViewerCount, live.StartTime)
	if !live.IsLive.V {
		t.Errorf("live = %+v", live)
	}
	// 13 photo profile of a business account
	ps, err := sources.Do(ctx, c, nil, endpoints.PSProfileCall("@shop_business_f10_g4"))
	must(err)
	nonZero("ps profile", ps.ID, ps.Username, ps.FullName, ps.Biography, ps.CategoryName, ps.Contact.Email, ps.Contact.Phone)
	if ps.Empty || ps.Followers.V != 10 || ps.Following.V != 4 || !ps.Posts.Valid || !ps.IsBusiness.V || !ps.IsVerified.Valid {
		t.Errorf("ps profile = %+v", ps)
	}
	// 14 comments
	post := "https://www.photosocial.example/p/post_c3/"
	cm, err := sources.Do(ctx, c, nil, endpoints.PSCommentsCall(post, ""))
	must(err)
	if len(cm.Items) != 3 || cm.Cursor != "" || cm.HasMoreKnown {
		t.Fatalf("comments = %d, cursor %q", len(cm.Items), cm.Cursor)
	}
	for _, it := range cm.Items {
		nonZero("comment", it.V.ID, it.V.Text, it.V.Username, it.V.CreatedAt)
		if !it.V.LikeCount.Valid || !it.V.ChildCommentCount.Valid {
			t.Errorf("comment = %+v", it.V)
		}
	}
	// 15 reels
	reels, err := sources.Do(ctx, c, nil, endpoints.PSReelsSearchCall("cats n5", 1))
	must(err)
	if len(reels.Items) != 5 || reels.Cursor != "2" {
		t.Fatalf("reels = %d, cursor %q", len(reels.Items), reels.Cursor)
	}
	for _, it := range reels.Items {
		nonZero("reel", it.V.ID, it.V.Code, it.V.OwnerUsername, it.V.PlayCount, it.V.LikeCount)
	}
	// 16 transcript of a reel built from a code
	tr, err := sources.Do(ctx, c, nil, endpoints.PSTranscriptCall("https://www.photosocial.example/reel/Dclip_t2/"))
	must(err)
	if len(tr.Entries) != 2 {
		t.Fatalf("transcripts = %d", len(tr.Entries))
	}
	for _, e := range tr.Entries {
		nonZero("transcript", e.V.ID, e.V.Shortcode, e.V.Text)
		if e.V.Shortcode != "Dclip_t2" {
			t.Errorf("shortcode = %q", e.V.Shortcode)
		}
	}
	// 17 embed
	em, err := sources.Do(ctx, c, nil, endpoints.PSEmbedCall("@alice"))
	must(err)
	if !strings.Contains(string(em.HTML), "@alice") {
		t.Errorf("embed = %q", em.HTML)
	}
	// 18 highlight, given with its prefix: media_count is the last two digits
	hl, err := sources.Do(ctx, c, nil, endpoints.PSHighlightCall("highlight:17900000000000005"))
	must(err)
	nonZero("highlight", hl.Title, hl.Username, hl.MediaCount)
	if hl.ID != "highlight:17900000000000005" || hl.Digits != "17900000000000005" || hl.MediaCount.V != 5 || len(hl.Items) != 5 {
		t.Errorf("highlight = %+v", hl)
	}
	for _, it := range hl.Items {
		switch it.V.MediaType.V {
		case 2:
			if len(it.V.VideoURLs) == 0 {
				t.Errorf("video item without URLs: %s", it.Raw)
			}
		case 1:
			if len(it.V.VideoURLs) != 0 {
				t.Errorf("image item with URLs: %s", it.Raw)
			}
		default:
			t.Errorf("media_type = %+v", it.V.MediaType)
		}
	}
	b.usage(t, 19, 19) // the 18 endpoints, the keyword search in both forms

	// A private photo-sharing account: empty, free.
	priv, err := sources.Do(ctx, c, nil, endpoints.PSProfileCall("private_carol"))
	must(err)
	if !priv.Empty || priv.Username != "" {
		t.Errorf("private profile = %+v", priv)
	}
	b.usage(t, 20, 19)
}

// walk pages a list to its end with sources.Walk and returns the item ids.
func walk[T any](t *testing.T, maxPages int, fetch func(ctx context.Context, cursor string) (*sources.Page[T], error), id func(T) string) ([]string, int, sources.StopReason) {
	t.Helper()
	var ids []string
	pages, reason, err := sources.Walk(context.Background(), maxPages, fetch, func(p *sources.Page[T]) error {
		for _, it := range p.Items {
			ids = append(ids, id(it.V))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, pages, reason
}

// reelsPages adapts the page-numbered reels search to Walk's cursors: the
// first page is 1, then each page's Cursor is the next number.
func reelsPages(c *sources.Client, query string) func(context.Context, string) (*sources.Page[endpoints.PSReel], error) {
	return func(ctx context.Context, cursor string) (*sources.Page[endpoints.PSReel], error) {
		page := 1
		if cursor != "" {
			n, err := strconv.Atoi(cursor)
			if err != nil {
				return nil, err
			}
			page = n
		}
		return sources.Do(ctx, c, nil, endpoints.PSReelsSearchCall(query, page))
	}
}

func TestSandboxWalkCounts(t *testing.T) {
	t.Parallel()
	const P = 7 // page size of the cursor lists; reels pages are sandbox.ReelsPageSize
	videoID := func(v endpoints.SVVideo) string { return string(v.ID) }
	type list func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason)
	cases := []struct {
		name     string
		run      list
		items    int
		pages    int
		reason   sources.StopReason
		extraReq int // requests made outside the walk (a profile for the secUid)
	}{
		{"followers f20", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			s := secUID(t, c, "ann_f20")
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVFollowEntry], error) {
				return sources.Do(ctx, c, nil, endpoints.SVFollowersCall(s, cur))
			},
				func(e endpoints.SVFollowEntry) string { return e.UniqueID })
		}, 20, 3, sources.StopEnd, 1},
		{"following g14 (a multiple of the page)", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			s := secUID(t, c, "ann_g14")
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVFollowEntry], error) {
				return sources.Do(ctx, c, nil, endpoints.SVFollowingCall(s, cur))
			},
				func(e endpoints.SVFollowEntry) string { return e.UniqueID })
		}, 14, 2, sources.StopEnd, 1},
		{"followers endless, page limit", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			s := secUID(t, c, "ann_endless")
			return walk(t, 5, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVFollowEntry], error) {
				return sources.Do(ctx, c, nil, endpoints.SVFollowersCall(s, cur))
			},
				func(e endpoints.SVFollowEntry) string { return e.UniqueID })
		}, 5 * P, 5, sources.StopPageLimit, 1},
		{"followers loop", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			s := secUID(t, c, "ann_loop")
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVFollowEntry], error) {
				return sources.Do(ctx, c, nil, endpoints.SVFollowersCall(s, cur))
			},
				func(e endpoints.SVFollowEntry) string { return e.UniqueID })
		}, 2 * P, 2, sources.StopRepeatedCursor, 1},
		{"keyword form A n30", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVVideo], error) {
				return sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Keyword: "cats n30"}, cur))
			}, videoID)
		}, 30, 5, sources.StopEnd, 0},
		{"keyword form B n30 with filters", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVVideo], error) {
				return sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Query: "cats n30", SortBy: "most-liked", DatePosted: "this-week", Region: "us"}, cur))
			}, videoID)
		}, 30, 5, sources.StopEnd, 0},
		{"keyword missing: one empty page", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVVideo], error) {
				return sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Keyword: "missing cats"}, cur))
			}, videoID)
		}, 0, 1, sources.StopEnd, 0},
		{"hashtag n10", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVHashtag], error) {
				return sources.Do(ctx, c, nil, endpoints.SVHashtagSearchCall("cats n10", cur))
			},
				func(h endpoints.SVHashtag) string { return string(h.Name) })
		}, 10, 2, sources.StopEnd, 0},
		{"top n15", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVTopResult], error) {
				return sources.Do(ctx, c, nil, endpoints.SVTopSearchCall("cats mixed n15", cur))
			},
				func(r endpoints.SVTopResult) string { return string(r.Type) + ":" + string(r.ID+r.UniqueID+r.Name) })
		}, 15, 3, sources.StopEnd, 0},
		{"song v9", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVVideo], error) {
				return sources.Do(ctx, c, nil, endpoints.SVSongVideosCall("song_v9", cur))
			}, videoID)
		}, 9, 2, sources.StopEnd, 0},
		{"comments c15", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.PSComment], error) {
				return sources.Do(ctx, c, nil, endpoints.PSCommentsCall("https://www.photosocial.example/p/post_c15/", cur))
			}, func(cm endpoints.PSComment) string { return string(cm.ID) })
		}, 15, 3, sources.StopEnd, 0},
		{"comments c14 (a multiple of the page)", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.PSComment], error) {
				return sources.Do(ctx, c, nil, endpoints.PSCommentsCall("https://www.photosocial.example/reel/post_c14/?igsh=x", cur))
			}, func(cm endpoints.PSComment) string { return string(cm.ID) })
		}, 14, 2, sources.StopEnd, 0},
		{"comments c0", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.PSComment], error) {
				return sources.Do(ctx, c, nil, endpoints.PSCommentsCall("https://www.photosocial.example/p/post_c0/", cur))
			}, func(cm endpoints.PSComment) string { return string(cm.ID) })
		}, 0, 1, sources.StopEnd, 0},
		// Reels: 12 a page; the walk ends on the first empty page, which is billed.
		{"reels n30", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, reelsPages(c, "cats n30"), func(r endpoints.PSReel) string { return string(r.Code) })
		}, 30, 4, sources.StopEnd, 0},
		{"reels n24", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, reelsPages(c, "cats n24"), func(r endpoints.PSReel) string { return string(r.Code) })
		}, 24, 3, sources.StopEnd, 0},
		{"reels n0", func(t *testing.T, c *sources.Client) ([]string, int, sources.StopReason) {
			return walk(t, 0, reelsPages(c, "cats n0"), func(r endpoints.PSReel) string { return string(r.Code) })
		}, 0, 1, sources.StopEnd, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, P)
			ids, pages, reason := tc.run(t, b.c)
			if len(ids) != tc.items || pages != tc.pages || reason != tc.reason {
				t.Errorf("items=%d pages=%d reason=%q; want %d %d %q", len(ids), pages, reason, tc.items, tc.pages, tc.reason)
			}
			if tc.reason == sources.StopEnd {
				sorted := slices.Clone(ids)
				slices.Sort(sorted)
				if len(slices.Compact(sorted)) != len(ids) {
					t.Errorf("duplicate items across pages")
				}
			}
			want := int64(pages + tc.extraReq)
			b.usage(t, want, want)
		})
	}
}

// Form B returns form A's result set, reordered by the filters; the numeric
// cursor of form B round-trips as digits.
func TestSandboxKeywordFormsAgree(t *testing.T) {
	t.Parallel()
	b := setup(t, 4)
	set := func(q endpoints.KeywordQuery) []string {
		ids, _, reason := walk(t, 0, func(ctx context.Context, cur string) (*sources.Page[endpoints.SVVideo], error) {
			return sources.Do(ctx, b.c, nil, endpoints.SVKeywordSearchCall(q, cur))
		}, func(v endpoints.SVVideo) string { return string(v.ID) })
		if reason != sources.StopEnd || len(ids) != 10 {
			t.Fatalf("%+v: %d ids, %q", q, len(ids), reason)
		}
		return ids
	}
	a := set(endpoints.KeywordQuery{Keyword: "Dogs n10"})
	f := set(endpoints.KeywordQuery{Query: "dogs n10", SortBy: "date-posted", Region: "DE", Trim: true})
	if slices.Equal(a, f) {
		t.Errorf("filters did not reorder: %v", f)
	}
	slices.Sort(a)
	slices.Sort(f)
	if !slices.Equal(a, f) {
		t.Errorf("form A %v\nform B %v", a, f)
	}
	b.usage(t, 6, 6)
}

// The sandbox refuses what the client would have refused: these answers are
// classified, not decoded, and cost nothing.
func TestSandboxErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	ctx := context.Background()
	_, err := sources.Do(ctx, b.c, nil, endpoints.SVSongCall("missing_song"))
	if sources.ClassOf(err) != sources.ClassNotFound {
		t.Errorf("missing song: %v", err)
	}
	_, err = sources.Do(ctx, b.c, nil, endpoints.PSHighlightCall("40412"))
	if sources.ClassOf(err) != sources.ClassNotFound {
		t.Errorf("missing highlight: %v", err)
	}
	_, err = sources.Do(ctx, b.c, nil, endpoints.PSCommentsCall("https://www.photosocial.example/p/missing_post/", ""))
	if sources.ClassOf(err) != sources.ClassNotFound {
		t.Errorf("missing post: %v", err)
	}
	b.usage(t, 3, 0)
}
