package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/runs"
)

// scripted is an upstream answering with route(path, query); it counts the
// requests it answered (every one is billable).
type scripted struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newScripted(t *testing.T, route func(w http.ResponseWriter, r *http.Request)) *scripted {
	t.Helper()
	s := &scripted{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		route(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// taskRow is a task's outcome.
type taskRow struct {
	State, Reason, DropReason string
	Pages, Items, Dropped     int64
}

func (b *bundle) task(t *testing.T, runID int64, kind, key string) taskRow {
	t.Helper()
	var r taskRow
	err := b.pool.QueryRow(context.Background(), `
		SELECT state, coalesce(reason, ''), coalesce(drop_reason, ''), pages, items, dropped
		FROM crawl.tasks WHERE run_id = $1 AND kind = $2 AND key = $3`, runID, kind, key).
		Scan(&r.State, &r.Reason, &r.DropReason, &r.Pages, &r.Items, &r.Dropped)
	if err != nil {
		t.Fatalf("task %s %s: %v", kind, key, err)
	}
	return r
}

// resume works run runID again, as `crawler run --resume` does.
func (b *bundle) resume(t *testing.T, job *jobfile.Job, runID int64) *pipeline.Summary {
	t.Helper()
	ctx := context.Background()
	if err := pipeline.Resume(ctx, b.pool, runID, job.Name); err != nil {
		t.Fatal(err)
	}
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	return sum
}

// incompressible returns n bytes of letters that PostgreSQL cannot compress
// below the btree limit (a repeated character would fit in an index).
func incompressible(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[rng.IntN(62)]
	}
	return string(b)
}

func followEntries(handles ...string) string {
	out := make([]string, len(handles))
	for i, h := range handles {
		b, _ := json.Marshal(map[string]any{"uniqueId": h, "nickname": "n " + h, "secUid": "S" + h})
		out[i] = string(b)
	}
	return strings.Join(out, ",")
}

// A follower entry whose uniqueId is 4 KB (PostgreSQL refused the whole
// page with 54000, index row too large, and the run stopped for good) is
// dropped and counted; the other 49 are stored. A profile whose secUid is
// 4 KB fails only its task, naming the field. A resume buys nothing again.
func TestOversizeKeysFailOnlyThemselves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	huge := incompressible(4096)
	good := make([]string, 0, 50)
	for i := range 50 {
		good = append(good, fmt.Sprintf("fan%02d", i))
	}
	good[17] = huge
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/api/shortvideo/profile" && q.Get("handle") == "good":
			fmt.Fprint(w, `{"success":true,"user":{"id":"1","uniqueId":"good","secUid":"SGOOD","verified":true},"stats":{"followerCount":50}}`)
		case r.URL.Path == "/api/shortvideo/profile" && q.Get("handle") == "badsec":
			fmt.Fprintf(w, `{"success":true,"user":{"id":"2","uniqueId":"badsec","secUid":%q},"stats":{}}`, huge)
		case r.URL.Path == "/api/shortvideo/profile" && q.Get("handle") == "other":
			fmt.Fprint(w, `{"success":true,"user":{"id":"3","uniqueId":"other","secUid":"SOTHER"},"stats":{}}`)
		case r.URL.Path == "/api/shortvideo/user/followers" && q.Get("secUid") == "SGOOD":
			fmt.Fprintf(w, `{"followers":[%s],"cursor":"c1","hasMore":false}`, followEntries(good...))
		case r.URL.Path == "/api/shortvideo/user/followers" && q.Get("secUid") == "SOTHER":
			fmt.Fprintf(w, `{"followers":[%s],"cursor":"c1","hasMore":false}`, followEntries("o1", "o2"))
		default:
			http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
		}
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, `
seeds: {shortvideo: {profiles: [good, badsec, other]}}
expand: {followers: {}}
`)
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	fol := b.task(t, sum.RunID, kinds.KindSVFollowers, "SGOOD")
	want := taskRow{State: "done", Reason: "end", DropReason: "followers[17]: uniqueId is 4096 bytes, cap 1000", Pages: 1, Items: 50, Dropped: 1}
	if fol != want {
		t.Errorf("followers task = %+v, want %+v", fol, want)
	}
	bad := b.task(t, sum.RunID, kinds.KindSVProfile, "badsec")
	if bad.State != "failed" || bad.Reason != "shortvideo/profile: user.secUid is 4096 bytes, cap 1000" {
		t.Errorf("badsec task = %+v", bad)
	}
	for _, h := range []string{"good", "other"} {
		if got := b.task(t, sum.RunID, kinds.KindSVProfile, h); got.State != "done" {
			t.Errorf("profile %s = %+v", h, got)
		}
	}
	if got := b.task(t, sum.RunID, kinds.KindSVFollowers, "SOTHER"); got.State != "done" || got.Dropped != 0 {
		t.Errorf("other's followers = %+v", got)
	}
	// good, other and 49 + 2 followers; badsec stored nothing.
	if got := b.count(t, `SELECT count(*) FROM shortvideo.users`); got != 53 {
		t.Errorf("users = %d, want 53", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows WHERE followee = 'good'`); got != 49 {
		t.Errorf("follows of good = %d, want 49", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows`); got != 51 {
		t.Errorf("follows = %d, want 51", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.users WHERE length(unique_id) > 1000 OR length(sec_uid) > 1000`); got != 0 {
		t.Errorf("%d oversize keys stored", got)
	}
	// 3 profiles + 2 follower pages, each bought once.
	if got := up.calls.Load(); got != 5 || sum.Pages != 4 {
		t.Errorf("requests = %d, pages committed = %d; want 5 and 4", got, sum.Pages)
	}
	st, err := runs.LoadStatus(context.Background(), b.pool, sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Dropped != 1 || len(st.Drops) != 1 || st.Drops[0].Kind != kinds.KindSVFollowers || st.Drops[0].Reason != want.DropReason {
		t.Errorf("status drops = %d %+v", st.Dropped, st.Drops)
	}

	// A resume does not buy the failed profile (or anything) again.
	if sum := b.resume(t, job, sum.RunID); sum.State != "done" || sum.Pages != 0 {
		t.Errorf("resume: %s (%s), %d pages", sum.State, sum.Reason, sum.Pages)
	}
	if got := up.calls.Load(); got != 5 {
		t.Errorf("requests after resume = %d, want 5", got)
	}
	if got := b.task(t, sum.RunID, kinds.KindSVProfile, "badsec"); got.State != "failed" {
		t.Errorf("badsec after resume = %+v", got)
	}
}

// Entries that are null, not objects, or lack their identifier are counted
// on the task, never dropped silently, and a page of only such entries that
// says hasMore does not end the list.
func TestDroppedEntriesAreCounted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/api/shortvideo/profile":
			fmt.Fprint(w, `{"success":true,"user":{"id":"1","uniqueId":"acct","secUid":"SACCT"},"stats":{}}`)
		case r.URL.Path == "/api/shortvideo/user/followers" && q.Get("cursor") == "":
			fmt.Fprint(w, `{"followers":[null,null,null,null,null,null],"cursor":"c1","hasMore":true}`)
		case r.URL.Path == "/api/shortvideo/user/followers" && q.Get("cursor") == "c1":
			fmt.Fprintf(w, `{"followers":[1,"x",[],true,%s,{},{"nickname":"nobody"}],"cursor":"c2","hasMore":false}`, followEntries("f1", "f2"))
		default:
			http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
		}
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, "seeds: {shortvideo: {profiles: [acct]}}\nexpand: {followers: {}}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	got := b.task(t, sum.RunID, kinds.KindSVFollowers, "SACCT")
	want := taskRow{State: "done", Reason: "end", DropReason: "followers[7]: no uniqueId", Pages: 2, Items: 14, Dropped: 12}
	if got != want {
		t.Errorf("followers task = %+v, want %+v", got, want)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.follows WHERE followee = 'acct'`); n != 2 {
		t.Errorf("follows = %d, want 2", n)
	}
	if n := up.calls.Load(); n != 3 {
		t.Errorf("requests = %d, want 3", n)
	}
	st, err := runs.LoadStatus(context.Background(), b.pool, sum.RunID)
	if err != nil || st.Dropped != 12 {
		t.Errorf("status dropped = %d, %v; want 12", st.Dropped, err)
	}
}

// Review finding: reels without a code, or one code under two ids, failed
// the search page on the code's unique constraint.
func TestReelCodesNeedNotBeUnique(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "1" {
			fmt.Fprint(w, `{"success":true,"reels":[{"id":"r1","code":""},{"id":"r2"},{"id":"r3","code":"SAME"},{"id":"r4","code":"SAME"}]}`)
			return
		}
		fmt.Fprint(w, `{"success":true,"reels":[]}`)
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, "seeds: {photosocial: {reels_searches: [surf]}}\nexpand: {}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	if got := b.task(t, sum.RunID, kinds.KindPSReelsSearch, "surf"); got.State != "done" || got.Pages != 2 || got.Dropped != 0 {
		t.Errorf("reels task = %+v", got)
	}
	if n := b.count(t, `SELECT count(*) FROM photosocial.reels`); n != 4 {
		t.Errorf("reels = %d, want 4", n)
	}
	if n := b.count(t, `SELECT count(*) FROM photosocial.reels WHERE code IS NULL`); n != 2 {
		t.Errorf("reels without code = %d, want 2", n)
	}
	if n := b.count(t, `SELECT count(*) FROM photosocial.reel_search_results`); n != 4 {
		t.Errorf("search results = %d, want 4", n)
	}
}

// Review finding: a follower entry without "verified" overwrote a profile's
// verified = true with false.
func TestFollowEntryWithoutVerifiedKeepsProfile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("handle") {
		case "star":
			fmt.Fprint(w, `{"success":true,"user":{"id":"1","uniqueId":"star","secUid":"SSTAR","verified":true},"stats":{}}`)
		case "fan":
			fmt.Fprint(w, `{"success":true,"user":{"id":"2","uniqueId":"fan","secUid":"SFAN"},"stats":{}}`)
		default: // fan's following: star, without the verified field
			fmt.Fprint(w, `{"following":[{"uniqueId":"star","nickname":"Star"}],"cursor":"","hasMore":false}`)
		}
	})
	b.baseURL = up.srv.URL + "/api"
	first := b.job(t, "seeds: {shortvideo: {profiles: [star]}}\nexpand: {}\n")
	if sum := b.run(t, first); sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	second := b.job(t, "seeds: {shortvideo: {profiles: [fan]}}\nexpand: {following: {}}\n")
	if sum := b.run(t, second); sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.users WHERE unique_id = 'star' AND verified AND nickname = 'Star'`); n != 1 {
		t.Errorf("star verified and renamed: %d rows, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.follows WHERE follower = 'fan' AND followee = 'star'`); n != 1 {
		t.Errorf("edge: %d rows, want 1", n)
	}
}

// Review finding: profile_pic_url and is_private were always NULL though
// the upstream sends both.
func TestPSProfileStoresPicAndPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, "seeds: {photosocial: {profiles: [natgeo]}}\n")
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	if n := b.count(t, `SELECT count(*) FROM photosocial.profiles
		WHERE username = 'natgeo' AND profile_pic_url LIKE 'https://%/profile/%.jpg' AND is_private = false`); n != 1 {
		t.Errorf("natgeo with picture and is_private: %d rows, want 1", n)
	}
}

// A reason with multi-byte characters around the length cap is stored
// (cut on a rune boundary), and so is one with invalid UTF-8 or a NUL.
func TestLongMultibyteReasonIsStored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	msg := strings.Repeat("é", 3000) + "\x00\xff"
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("handle") {
		case "bad":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"success":false,"message":%q}`, "a"+msg)
		default:
			fmt.Fprint(w, `{"success":true,"user":{"id":"2","uniqueId":"fine"},"stats":{}}`)
		}
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, "seeds: {shortvideo: {profiles: [bad, fine]}}\nexpand: {}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	got := b.task(t, sum.RunID, kinds.KindSVProfile, "bad")
	if got.State != "failed" || !utf8.ValidString(got.Reason) || len(got.Reason) > frontier.MaxReasonBytes || !strings.Contains(got.Reason, "é") {
		t.Errorf("bad task = %s, reason (%d bytes) %q", got.State, len(got.Reason), got.Reason)
	}
	if got := b.task(t, sum.RunID, kinds.KindSVProfile, "fine"); got.State != "done" {
		t.Errorf("fine task = %+v", got)
	}
}

// A highlight's items that are null, not objects or undecodable are counted
// as dropped with the task, and the other items are stored at their places.
func TestHighlightBadItemsAreCounted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":"highlight:17890","title":"T","media_count":5,"user":{"username":"owner"},`+
			`"items":[null,{"media_type":2,"video_versions":[{"url":"https://v/1"}]},"x",{"media_type":"two"},{"media_type":1}]}`)
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, "seeds: {photosocial: {highlights: [\"17890\"]}}\nexpand: {}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	got := b.task(t, sum.RunID, kinds.KindPSHighlight, "17890")
	if got.State != "done" || got.Dropped != 3 || got.Items != 5 || !strings.HasPrefix(got.DropReason, "items[3]: ") {
		t.Errorf("highlight task = %+v, want done with 5 items, 3 dropped, the last for items[3]", got)
	}
	if n := b.count(t, `SELECT count(*) FROM photosocial.highlight_items WHERE position IN (2, 5)`); n != 2 {
		t.Errorf("highlight items at positions 2 and 5 = %d, want 2", n)
	}
	if n := b.count(t, `SELECT count(*) FROM photosocial.highlight_items`); n != 2 {
		t.Errorf("highlight items = %d, want 2", n)
	}
	if n := up.calls.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}
