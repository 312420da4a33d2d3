package pipeline_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// analystJob harvests what the analysts' guide's "More examples" read: profiles
// (snapshots, one page of followers each), a filtered keyword search and
// photo-sharing profiles. The sandbox's page size is 10.
const analystJob = `
limits: {max_pages: 1, max_depth: 1}
expand: {followers: {max_pages: 1}}
seeds:
  shortvideo:
    profiles: [creator_f12, grower, small_f3]
    keyword_searches:
      - {query: dance n12, date_posted: this-month, sort_by: most-liked, region: us}
      - street food n6
  photosocial: {profiles: [grower, steady_f30]}
`

// twoRuns harvests analystJob twice, against sandboxes at world days
// days[0] and days[1], so every growing counter moves between the runs (up
// when days[1] > days[0], down otherwise). It returns the bundle, the run
// ids and the sandbox servers (kept open as oracles).
func twoRuns(t *testing.T, days [2]int64) (*bundle, [2]int64, [2]*httptest.Server) {
	t.Helper()
	pool := setup(t).pool
	var runs [2]int64
	var srvs [2]*httptest.Server
	for i, day := range days {
		sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: day, PageSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		srvs[i] = httptest.NewServer(sb.Handler())
		t.Cleanup(srvs[i].Close)
		b := &bundle{pool: pool, sandbox: sb, baseURL: srvs[i].URL + "/api"}
		sum := b.run(t, b.job(t, analystJob))
		if sum.State != "done" {
			t.Fatalf("run at day %d: %s %s", day, sum.State, sum.Reason)
		}
		runs[i] = sum.RunID
	}
	return &bundle{pool: pool}, runs, srvs
}

// oracle asks a contract sandbox directly (outside the crawler) and
// decodes the answer into v.
func oracle(t *testing.T, srv *httptest.Server, path string, q url.Values, v any) {
	t.Helper()
	getJSON(t, srv.URL+"/api"+path+"?"+q.Encode(), v)
}

type svProfile struct {
	Stats struct {
		FollowerCount int64 `json:"followerCount"`
	} `json:"stats"`
}

type psProfile struct {
	Data struct {
		User struct {
			EdgeFollowedBy struct {
				Count int64 `json:"count"`
			} `json:"edge_followed_by"`
		} `json:"user"`
	} `json:"data"`
}

type keywordPage struct {
	Videos []struct {
		ID    string `json:"id"`
		Stats struct {
			PlayCount int64 `json:"playCount"`
		} `json:"stats"`
		Author struct {
			UniqueID string `json:"uniqueId"`
		} `json:"author"`
	} `json:"videos"`
}

var danceQuery = url.Values{"query": {"dance n12"}, "date_posted": {"this-month"}, "sort_by": {"most-liked"}, "region": {"us"}}

// moreExamples returns the example queries of docs/analysts.md's "More
// examples" section, keyed by their leading -- comment.
func moreExamples(t *testing.T) map[string]string {
	t.Helper()
	text, err := os.ReadFile("../docs/analysts.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(text), "\n## More examples\n")
	if !ok {
		t.Fatal(`docs/analysts.md has no "## More examples" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok := strings.Cut(sec, "```sql\n")
	if !ok {
		t.Fatal("no ```sql block in the section")
	}
	block, _, _ = strings.Cut(block, "```")
	out := map[string]string{}
	for _, stmt := range strings.Split(block, ";\n") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		title, body, _ := strings.Cut(stmt, "\n")
		if !strings.HasPrefix(title, "-- ") {
			t.Fatalf("example query without a -- title:\n%s", stmt)
		}
		out[strings.TrimPrefix(title, "-- ")] = body
	}
	return out
}

// rowsOf runs query and renders each row as its values joined by " | "
// (NULL for null, times in UTC).
func rowsOf(t *testing.T, b *bundle, query string) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), query)
	if err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, render(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func render(vals ...any) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			s[i] = "NULL"
		case *int64:
			if v == nil {
				s[i] = "NULL"
			} else {
				s[i] = fmt.Sprint(*v)
			}
		case time.Time:
			s[i] = v.UTC().Format(time.RFC3339Nano)
		case pgtype.Numeric: // sum(bigint)
			dv, err := v.Value()
			if err != nil {
				panic(err)
			}
			s[i] = fmt.Sprint(dv)
		default:
			s[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(s, " | ")
}

// snap is one snapshot row: the model the expected answers are computed
// from, in Go, independently of the views.
type snap struct {
	run   int64
	at    time.Time
	count *int64
}

// snapshots loads key -> snapshots ordered by run from a snapshot table.
func snapshots(t *testing.T, b *bundle, table, key, counter string) map[string][]snap {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), fmt.Sprintf(`SELECT %s, run_id, captured_at, %s FROM %s ORDER BY 1, 2`, key, counter, table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]snap{}
	for rows.Next() {
		var k string
		var s snap
		if err := rows.Scan(&k, &s.run, &s.at, &s.count); err != nil {
			t.Fatal(err)
		}
		out[k] = append(out[k], s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sub(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	d := *a - *b
	return &d
}

// byDeltaDesc orders by delta descending, NULL last, then by key.
func byDeltaDesc(da, db *int64, ka, kb string) int {
	switch {
	case da == nil && db == nil:
	case da == nil:
		return 1
	case db == nil:
		return -1
	case *da != *db:
		return cmp.Compare(*db, *da)
	}
	return strings.Compare(ka, kb)
}

// TestMoreExamples runs the analysts' guide's "More examples" against two harvests
// and compares each answer with one computed in Go from the snapshot rows,
// and the counters with what the sandbox itself answers at each world day:
// once with counters rising (days 0 then 7), once falling (days 30 then 0),
// where a fall must show as a negative delta, never as growth.
func TestMoreExamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		days [2]int64
	}{{"rising", [2]int64{0, 7}}, {"falling", [2]int64{30, 0}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, runs, srvs := twoRuns(t, tc.days)
			checkMoreExamples(t, b, runs, srvs, tc.days[1] > tc.days[0])
		})
	}
}

func checkMoreExamples(t *testing.T, b *bundle, runs [2]int64, srvs [2]*httptest.Server, rising bool) {
	queries := moreExamples(t)
	users := snapshots(t, b, "shortvideo.user_snapshots", "unique_id", "follower_count")
	videos := snapshots(t, b, "shortvideo.video_snapshots", "video_id", "play_count")
	profiles := snapshots(t, b, "photosocial.profile_snapshots", "username", "follower_count")

	// The sandbox's own counters at both days.
	var sv [2]svProfile
	var ps [2]psProfile
	var kw [2]keywordPage
	for i := range 2 {
		oracle(t, srvs[i], "/shortvideo/profile", url.Values{"handle": {"grower"}}, &sv[i])
		oracle(t, srvs[i], "/photosocial/profile", url.Values{"handle": {"grower"}}, &ps[i])
		oracle(t, srvs[i], "/shortvideo/search/keyword", danceQuery, &kw[i])
	}
	svDelta := sv[1].Stats.FollowerCount - sv[0].Stats.FollowerCount
	psDelta := ps[1].Data.User.EdgeFollowedBy.Count - ps[0].Data.User.EdgeFollowedBy.Count
	if (svDelta > 0) != rising || (psDelta > 0) != rising {
		t.Fatalf("sandbox counters did not move as the world days say: %d, %d", svDelta, psDelta)
	}
	if len(kw[1].Videos) != 10 {
		t.Fatalf("oracle keyword page has %d videos, want 10", len(kw[1].Videos))
	}
	// The growth views' deltas are the sandbox's differences.
	if got, want := rowsOf(t, b, `SELECT prev_run_id, run_id, prev_follower_count, follower_count, follower_count_delta FROM shortvideo.user_growth WHERE unique_id = 'grower'`),
		render(runs[0], runs[1], sv[0].Stats.FollowerCount, sv[1].Stats.FollowerCount, svDelta); len(got) != 1 || got[0] != want {
		t.Errorf("user_growth of grower = %q, want [%s]", got, want)
	}
	if got, want := rowsOf(t, b, `SELECT follower_count_delta FROM photosocial.profile_growth WHERE username = 'grower'`), render(psDelta); len(got) != 1 || got[0] != want {
		t.Errorf("profile_growth of grower = %q, want [%s]", got, want)
	}
	for i, v := range kw[1].Videos {
		want := render(v.Stats.PlayCount - kw[0].Videos[i].Stats.PlayCount)
		if kw[0].Videos[i].ID != v.ID {
			t.Fatalf("oracle: rank %d is %s then %s", i+1, kw[0].Videos[i].ID, v.ID)
		}
		if got := rowsOf(t, b, `SELECT play_count_delta FROM shortvideo.video_growth WHERE video_id = '`+v.ID+`'`); len(got) != 1 || got[0] != want {
			t.Errorf("video_growth of %s = %q, want [%s]", v.ID, got, want)
		}
	}

	want := map[string][]string{}

	// Accounts followed by the most harvested users: the count of edges,
	// never multiplied by snapshots, and the latest snapshot's count.
	{
		type row struct {
			followee string
			n        int64
		}
		var rs []row
		for _, r := range rowsOf(t, b, `SELECT followee, count(*) FROM shortvideo.follows GROUP BY 1`) {
			var x row
			if _, err := fmt.Sscanf(r, "%s | %d", &x.followee, &x.n); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, x)
		}
		slices.SortFunc(rs, func(a, c row) int { return cmp.Or(cmp.Compare(c.n, a.n), strings.Compare(a.followee, c.followee)) })
		// grower's followers grow at the head of its list (docs/sandbox.md,
		// List growth) by at least 10 between the runs: the first page of
		// each run holds 10 different followers.
		if got := fmt.Sprint(rs); got != "[{grower 20} {creator_f12 10} {small_f3 3}]" {
			t.Fatalf("follows per followee: %s", got)
		}
		var exp []string
		for _, r := range rs {
			s := users[r.followee]
			last := s[len(s)-1]
			exp = append(exp, render(r.followee, r.n, last.count, last.run))
		}
		if !strings.HasPrefix(exp[0], render("grower", 20, sv[1].Stats.FollowerCount, runs[1])) {
			t.Errorf("grower's latest count is not the second run's: %s", exp[0])
		}
		want["accounts followed by the most harvested users, with their latest follower count"] = exp
	}

	// Play-count change of each video between its last two snapshots.
	type vd struct {
		id    string
		p, c  snap
		delta *int64
	}
	var changes []vd
	for id, s := range videos {
		if len(s) >= 2 {
			p, c := s[len(s)-2], s[len(s)-1]
			changes = append(changes, vd{id, p, c, sub(c.count, p.count)})
		}
	}
	slices.SortFunc(changes, func(a, c vd) int { return byDeltaDesc(a.delta, c.delta, a.id, c.id) })
	if len(changes) < 10 {
		t.Fatalf("only %d videos with two snapshots", len(changes))
	}
	for _, c := range changes {
		if c.delta == nil || (*c.delta > 0) != rising {
			t.Fatalf("video %s: play count %v -> %v", c.id, c.p.count, c.c.count)
		}
	}
	var exp []string
	for _, c := range changes[:10] {
		exp = append(exp, render(c.id, c.p.run, c.c.run, c.p.count, c.c.count, c.delta))
	}
	want["play-count change of each video between the last two runs that saw it (a fall is negative)"] = exp

	// Follower growth this week: last minus the snapshot before the
	// week's first (every snapshot of the test is this week's).
	type ud struct {
		id          string
		delta       *int64
		since, till time.Time
	}
	var growth []ud
	for id, s := range users {
		if len(s) >= 2 {
			growth = append(growth, ud{id, sub(s[len(s)-1].count, s[0].count), s[0].at, s[len(s)-1].at})
		}
	}
	slices.SortFunc(growth, func(a, c ud) int { return byDeltaDesc(a.delta, c.delta, a.id, c.id) })
	exp = nil
	for _, g := range growth {
		exp = append(exp, render(g.id, g.delta, g.since, g.till))
	}
	if len(exp) != 3 {
		t.Fatalf("users with two snapshots: %q", exp)
	}
	want["follower growth of each creator this week (from the snapshot before the week's first one)"] = exp

	// Top videos between the last two runs (both runs took snapshots).
	authors := map[string]string{}
	for _, r := range rowsOf(t, b, `SELECT video_id, coalesce(author_unique_id, 'NULL') FROM shortvideo.videos`) {
		id, a, _ := strings.Cut(r, " | ")
		authors[id] = a
	}
	exp = nil
	for _, c := range changes {
		if c.p.run == runs[0] && c.c.run == runs[1] && len(exp) < 10 {
			exp = append(exp, render(c.id, authors[c.id], c.p.count, c.c.count, c.delta))
		}
	}
	want["top videos by play-count growth between the last two runs that took video snapshots"] = exp

	// The keyword search's latest ranking is the sandbox's second answer.
	exp = nil
	for i, v := range kw[1].Videos {
		exp = append(exp, render(i+1, v.ID, v.Author.UniqueID, v.Stats.PlayCount, runs[1]))
	}
	want["latest ranking of a keyword search with filters, with each video's latest play count"] = exp

	// Photo-sharing accounts that lost followers: grower when falling
	// (steady_f30 has a fixed count: delta 0, not a loss).
	exp = nil
	var lost []ud
	for id, s := range profiles {
		if len(s) >= 2 {
			if d := sub(s[len(s)-1].count, s[len(s)-2].count); d != nil && *d < 0 {
				lost = append(lost, ud{id: id, delta: d})
			}
		}
	}
	slices.SortFunc(lost, func(a, c ud) int { return cmp.Or(cmp.Compare(*a.delta, *c.delta), strings.Compare(a.id, c.id)) })
	for _, l := range lost {
		s := profiles[l.id]
		exp = append(exp, render(l.id, s[len(s)-2].count, s[len(s)-1].count, l.delta))
	}
	if rising != (len(exp) == 0) || (!rising && exp[0] != render("grower", ps[0].Data.User.EdgeFollowedBy.Count, ps[1].Data.User.EdgeFollowedBy.Count, psDelta)) {
		t.Errorf("accounts that lost followers: %q", exp)
	}
	want["photo-sharing accounts that lost followers between their last two snapshots"] = exp

	if !rising {
		// The examples before the views: on these two runs the
		// first counts every edge twice (once per snapshot) and the second
		// reports a fall as positive "growth".
		// (grower: 20 edges, its list grew at the head between the runs)
		if got := rowsOf(t, b, oldFollowed); len(got) != 3 || got[1] != render("creator_f12", 20, 12) || !strings.HasPrefix(got[0], render("grower", 40)) {
			t.Errorf("old followed query: %q", got)
		}
		for _, r := range rowsOf(t, b, oldGrowth) {
			if strings.HasSuffix(r, " | 0") || strings.Contains(r, "-") {
				t.Errorf("old growth query: %q", r)
			}
		}
	}

	for title := range queries {
		if _, ok := want[title]; !ok {
			t.Errorf("example query %q has no expected answer in this test", title)
		}
	}
	for title, exp := range want {
		q, ok := queries[title]
		if !ok {
			t.Errorf("docs/analysts.md lost its example %q", title)
			continue
		}
		if got := rowsOf(t, b, q); !slices.Equal(got, exp) {
			t.Errorf("%s:\n got  %q\n want %q", title, got, exp)
		}
	}
}

// The example queries before migration 00010, kept to show what
// they got wrong.
const (
	oldFollowed = `SELECT f.followee, count(*) AS harvested, max(s.follower_count) AS reported
FROM shortvideo.follows f LEFT JOIN shortvideo.user_snapshots s ON s.unique_id = f.followee
GROUP BY f.followee ORDER BY 2 DESC, 1 LIMIT 10`
	oldGrowth = `SELECT video_id, max(play_count) - min(play_count) AS growth
FROM (SELECT video_id, play_count, rank() OVER (PARTITION BY video_id ORDER BY run_id DESC) AS r
      FROM shortvideo.video_snapshots) s
WHERE r <= 2 GROUP BY video_id HAVING count(*) = 2 ORDER BY growth DESC LIMIT 10`
)
