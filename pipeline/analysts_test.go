package pipeline_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
)

// The analysts' guide (docs/analysts.md): its job runs on four nights
// against the sandbox in the real dialect with heavy-tailed churn, 20
// entries a page, and every question's query must return exactly what the
// sandbox's world says (ChurnTruth, ChurnChanges and the sandbox's own
// answers, not the crawler's rows), and the rows the guide shows must be
// the first rows it returns.
var analystsDays = []int64{1, 2, 3, 4}

// The guide's literals: the account its follow questions are about, the
// creator its video questions are about, its song, search and post.
const (
	analystsPageSize = 20
	analystsNewcomer = "fabio_newcomer_f9"
	analystsCreator  = "rosa_f4000"
	analystsSong     = "anthem_v12_r4"
	analystsKeyword  = "street food n8"
	analystsPostURL  = "https://www.instagram.com/p/launch_c6_r2/"
)

// guideQuestion is one question of the guide: its heading, its query and
// the result it shows.
type guideQuestion struct {
	title, sql string
	head       []string   // column names shown
	shown      [][]string // rows shown
	elided     bool       // a "..." line: more rows than shown
	total      int        // the "(N rows)" line
}

// readAnalystsGuide returns the guide's job (the yaml block of "The crawl
// behind the examples") and its questions (each "### " heading of
// "Questions" with one sql and one text block).
func readAnalystsGuide(t *testing.T) (string, []guideQuestion) {
	t.Helper()
	text, err := os.ReadFile("../docs/analysts.md")
	if err != nil {
		t.Fatal(err)
	}
	var job, section, info string
	var qs []guideQuestion
	var block []string
	inBlock := false
	for i, line := range strings.Split(string(text), "\n") {
		switch {
		case inBlock && line == "```":
			inBlock = false
			body := strings.Join(block, "\n")
			switch {
			case section == "The crawl behind the examples" && info == "yaml" && job == "":
				job = body
			case section != "Questions" || len(qs) == 0:
			case info == "sql" && qs[len(qs)-1].sql == "":
				qs[len(qs)-1].sql = body
			case info == "text" && qs[len(qs)-1].head == nil:
				q := &qs[len(qs)-1]
				if err := parseShown(q, block); err != nil {
					t.Fatalf("docs/analysts.md:%d: %q: %v", i+1, q.title, err)
				}
			default:
				t.Fatalf("docs/analysts.md:%d: question %q has a second %s block", i+1, qs[len(qs)-1].title, info)
			}
		case inBlock:
			block = append(block, line)
		case strings.HasPrefix(line, "```"):
			inBlock, info, block = true, strings.TrimPrefix(line, "```"), nil
		case strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		case strings.HasPrefix(line, "### ") && section == "Questions":
			qs = append(qs, guideQuestion{title: strings.TrimPrefix(line, "### ")})
		}
	}
	if job == "" {
		t.Fatal(`docs/analysts.md: no yaml block under "## The crawl behind the examples"`)
	}
	for _, q := range qs {
		if q.sql == "" || q.head == nil {
			t.Errorf("docs/analysts.md: question %q needs a sql block and a text block of its result", q.title)
		}
	}
	return job, qs
}

var rowsLine = regexp.MustCompile(`^\((\d+) rows?\)$`)

// parseShown reads a result as psql prints it: a header, a rule, rows,
// then "(N rows)"; a "..." line stands for rows left out.
func parseShown(q *guideQuestion, lines []string) error {
	if len(lines) == 0 {
		q.head = []string{} // an empty block: the test prints what to show
		return nil
	}
	if len(lines) < 3 || strings.Trim(lines[1], "-+") != "" {
		return fmt.Errorf("the text block is not a header, a rule of - and +, rows and (N rows)")
	}
	cells := func(l string) []string {
		out := strings.Split(l, "|")
		for i := range out {
			out[i] = strings.TrimSpace(out[i])
		}
		return out
	}
	q.head = cells(lines[0])
	for _, l := range lines[2:] {
		switch m := rowsLine.FindStringSubmatch(l); {
		case m != nil:
			q.total, _ = strconv.Atoi(m[1])
			return nil
		case l == "...":
			q.elided = true
		case q.elided:
			return fmt.Errorf("rows after ...")
		default:
			q.shown = append(q.shown, cells(l))
		}
	}
	return fmt.Errorf("no (N rows) line")
}

// textResult runs query and returns its column names and rows as
// PostgreSQL's text output (what psql shows), NULL as nil.
func textResult(t *testing.T, b *bundle, query string) ([]string, [][]*string) {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), query, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	defer rows.Close()
	var cols []string
	for _, f := range rows.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	var out [][]*string
	for rows.Next() {
		var row []*string
		for _, v := range rows.RawValues() {
			if v == nil {
				row = append(row, nil)
			} else {
				s := string(v)
				row = append(row, &s)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	return cols, out
}

// psqlTable prints a result as the guide shows it: every row when there
// are at most 12, else the first 6 and "...".
func psqlTable(cols []string, rows [][]*string) string {
	shown := rows
	if len(rows) > 12 {
		shown = rows[:6]
	}
	width := make([]int, len(cols))
	cell := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	for i, c := range cols {
		width[i] = len([]rune(c))
		for _, r := range shown {
			width[i] = max(width[i], len([]rune(cell(r[i]))))
		}
	}
	var b strings.Builder
	line := func(vals []string) {
		for i, v := range vals {
			if i > 0 {
				b.WriteString("|")
			}
			b.WriteString(" " + v + strings.Repeat(" ", width[i]-len([]rune(v))+1))
		}
		b.WriteString("\n")
	}
	line(cols)
	for i := range cols {
		if i > 0 {
			b.WriteString("+")
		}
		b.WriteString(strings.Repeat("-", width[i]+2))
	}
	b.WriteString("\n")
	for _, r := range shown {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = cell(v)
		}
		line(vals)
	}
	if len(shown) < len(rows) {
		b.WriteString("...\n")
	}
	if len(rows) == 1 {
		b.WriteString("(1 row)\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n", len(rows))
	}
	// psql pads the last column too; the guide does not.
	return regexp.MustCompile(` +\n`).ReplaceAllString(b.String(), "\n")
}

// canon renders rows as "a | b | NULL" lines, for comparing with the
// expected answers.
func canon(rows [][]*string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		s := make([]string, len(r))
		for j, v := range r {
			s[j] = "NULL"
			if v != nil {
				s[j] = *v
			}
		}
		out[i] = strings.Join(s, " | ")
	}
	return out
}

// analystsCrawl is the guide's database: its job run once a night.
type analystsCrawl struct {
	b     *bundle
	job   *jobfile.Job
	runs  []int64
	usage []sandbox.Usage // each night's billable requests, right after its run
}

func runAnalystsNights(t *testing.T, jobText string) *analystsCrawl {
	t.Helper()
	pool := testPool(t)
	c := &analystsCrawl{b: &bundle{pool: pool}}
	for _, day := range analystsDays {
		sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, Preset: sandbox.PresetScrapeCreators,
			Churn: sandbox.ChurnHeavyTail, WorldTime: day, PageSize: analystsPageSize})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(sb.Handler())
		job, err := jobfile.ParseWith("analysts.yaml", []byte(jobText), jobfile.LoadOptions{BaseURL: srv.URL})
		if err != nil {
			t.Fatalf("the guide's job: %v", err)
		}
		c.job = job
		// In a crawler process without the race detector, as the guide
		// runs it: the everything harvest runs the pipeline under it.
		runID, code, out := crawlChild(t, pool, jobText, job.API.KeyEnv, "--base-url", srv.URL)
		var state string
		if err := pool.QueryRow(context.Background(), `SELECT state FROM crawl.runs WHERE id = $1`, runID).Scan(&state); err != nil || state != "done" || code != 0 {
			t.Fatalf("night %d: run %d %s (%v), exit %d:\n%s", day, runID, state, err, code, out)
		}
		c.runs = append(c.runs, runID)
		c.usage = append(c.usage, sb.Usage(testKey))
		srv.Close()
	}
	return c
}

// followWalk is the part of a followers list a run stores: its newest page.
type followWalk struct {
	entries  []string
	complete bool // the page held the whole list
}

// crawlTruth is what the guide's job fetches each night, computed from the
// sandbox's ground truth: the seed profiles and the newest page of their
// followers, those followers' profiles (follower_profiles, one hop) and the
// newest page of their followers (max_depth 1 stops there).
type crawlTruth struct {
	profiles []map[string]int64 // per night: account -> follower count
	walks    []map[string]followWalk
	edges    map[[2]string][2]int // follower, followee -> first, last night (index)
}

func newCrawlTruth(t *testing.T, seeds []string, days []int64) *crawlTruth {
	t.Helper()
	m := &crawlTruth{edges: map[[2]string][2]int{}}
	for i, day := range days {
		profiles, walks := map[string]int64{}, map[string]followWalk{}
		fetch := func(h string) {
			if _, ok := profiles[h]; ok {
				return
			}
			tr, err := sandbox.ChurnTruth(h, day)
			if err != nil {
				t.Fatal(err)
			}
			n := min(analystsPageSize, len(tr.Followers))
			profiles[h], walks[h] = tr.FollowerCount, followWalk{tr.Followers[:n], len(tr.Followers) <= analystsPageSize}
		}
		for _, s := range seeds {
			fetch(s)
		}
		for _, s := range seeds {
			for _, e := range walks[s].entries {
				fetch(e)
			}
		}
		for owner, w := range walks {
			for _, e := range w.entries {
				k := [2]string{e, owner}
				if fl, ok := m.edges[k]; ok {
					m.edges[k] = [2]int{fl[0], i}
				} else {
					m.edges[k] = [2]int{i, i}
				}
			}
		}
		m.profiles, m.walks = append(m.profiles, profiles), append(m.walks, walks)
	}
	return m
}

// fetchedNights returns, per account whose profile was fetched, the nights
// (indexes) it was.
func (m *crawlTruth) fetchedNights() map[string][]int {
	out := map[string][]int{}
	for i, p := range m.profiles {
		for h := range p {
			out[h] = append(out[h], i)
		}
	}
	return out
}

// sandboxAt serves the world of day in a preset, for oracle requests
// outside the crawl (the crawl's own servers count its requests).
func sandboxAt(t *testing.T, preset string, day int64) string {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, Preset: preset,
		Churn: sandbox.ChurnHeavyTail, WorldTime: day, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// getJSON asks a sandbox directly (outside the crawler) for u and decodes
// the answer into v.
func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("oracle %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

type oracleVideo struct {
	ID    string `json:"id"`
	Stats struct {
		PlayCount    int64 `json:"playCount"`
		DiggCount    int64 `json:"diggCount"`
		CommentCount int64 `json:"commentCount"`
		ShareCount   int64 `json:"shareCount"`
	} `json:"stats"`
	Author struct {
		UniqueID string `json:"uniqueId"`
	} `json:"author"`
}

// oracleVideos pages through a contract list of videos (song videos,
// keyword search) at base.
func oracleVideos(t *testing.T, base, path string, q url.Values) []oracleVideo {
	t.Helper()
	var out []oracleVideo
	for cursor := ""; ; {
		q.Set("cursor", cursor)
		var page struct {
			Videos  []oracleVideo `json:"videos"`
			Cursor  string        `json:"cursor"`
			HasMore bool          `json:"hasMore"`
		}
		getJSON(t, base+"/api"+path+"?"+q.Encode(), &page)
		out = append(out, page.Videos...)
		if !page.HasMore {
			return out
		}
		cursor = page.Cursor
	}
}

// oracleAweme is a video as the real preset's lists show it.
type oracleAweme struct {
	ID    string `json:"aweme_id"`
	Stats struct {
		PlayCount    int64 `json:"play_count"`
		DiggCount    int64 `json:"digg_count"`
		CommentCount int64 `json:"comment_count"`
		ShareCount   int64 `json:"share_count"`
	} `json:"statistics"`
	ShareURL string `json:"share_url"`
}

// oracleCreatorPage is the newest page of handle's videos on night i, as
// the real preset serves it (the job walks one page of each list).
func (w *analystsWorld) oracleCreatorPage(handle string, i int) []oracleAweme {
	var page struct {
		Videos []oracleAweme `json:"aweme_list"`
	}
	getJSON(w.t, w.real[i]+"/v3/tiktok/profile/videos?"+url.Values{"handle": {handle}, "sort_by": {"latest"}}.Encode(), &page)
	return page.Videos[:min(analystsPageSize, len(page.Videos))]
}

// oracleSVComment is a comment on a video, as the real preset serves it.
type oracleSVComment struct {
	CID        string `json:"cid"`
	Text       string `json:"text"`
	DiggCount  int64  `json:"digg_count"`
	ReplyTotal int64  `json:"reply_comment_total"`
	User       struct {
		UniqueID string `json:"unique_id"`
	} `json:"user"`
}

// oracleVideoComments is the first page of the comments under the video
// at videoURL on night i (the job's video_comments walks one page).
func (w *analystsWorld) oracleVideoComments(videoURL string, i int) []oracleSVComment {
	var page struct {
		Comments []oracleSVComment `json:"comments"`
	}
	getJSON(w.t, w.real[i]+"/v1/tiktok/video/comments?"+url.Values{"url": {videoURL}}.Encode(), &page)
	return page.Comments[:min(analystsPageSize, len(page.Comments))]
}

type oracleComment struct {
	ID                string `json:"id"`
	Text              string `json:"text"`
	CommentLikeCount  int64  `json:"comment_like_count"`
	ChildCommentCount *int64 `json:"child_comment_count"`
	User              struct {
		Username string `json:"username"`
	} `json:"user"`
	Replies []oracleComment `json:"replies"`
}

// oracleComments is the post's comments with their replies on night i, in
// the real dialect (the contract has no replies).
func (w *analystsWorld) oracleComments(i int) []oracleComment {
	var out []oracleComment
	for cursor := ""; ; {
		q := url.Values{"url": {analystsPostURL}, "include_replies": {"true"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Comments []oracleComment `json:"comments"`
			Cursor   string          `json:"cursor"`
		}
		getJSON(w.t, w.real[i]+"/v2/instagram/post/comments?"+q.Encode(), &page)
		out = append(out, page.Comments...)
		if page.Cursor == "" {
			return out
		}
		cursor = page.Cursor
	}
}

func nullable(n *int64) string {
	if n == nil {
		return "NULL"
	}
	return itoa(*n)
}

// pct is round(100.0 * num / den, 2) in hundredths (num, den >= 0).
func pct(num, den int64) int64 {
	q, r := 10000*num/den, 10000*num%den
	if 2*r >= den {
		q++
	}
	return q
}

// analystsWorld is what the guide's answers are computed from: a model of
// the crawl from the world's truth, and what the sandbox serves each night.
type analystsWorld struct {
	t                    *testing.T
	c                    *analystsCrawl
	m                    *crawlTruth
	fetched              map[string][]int // account -> the nights its profile was fetched
	last                 int              // the last night's index
	contract             []string         // per night, a contract sandbox at its day
	real                 []string         // per night, a real-preset sandbox at its day
	songVideos, searches [][]oracleVideo  // per night, as the contract serves them
}

func newAnalystsWorld(t *testing.T, c *analystsCrawl) *analystsWorld {
	w := &analystsWorld{t: t, c: c, m: newCrawlTruth(t, c.job.Seeds.ShortVideo.Profiles, analystsDays), last: len(analystsDays) - 1}
	w.fetched = w.m.fetchedNights()
	for _, day := range analystsDays {
		base := sandboxAt(t, sandbox.PresetContract, day)
		w.contract = append(w.contract, base)
		w.real = append(w.real, sandboxAt(t, sandbox.PresetScrapeCreators, day))
		w.songVideos = append(w.songVideos, oracleVideos(t, base, "/shortvideo/song/videos", url.Values{"id": {analystsSong}}))
		w.searches = append(w.searches, oracleVideos(t, base, "/shortvideo/search/keyword", url.Values{"keyword": {analystsKeyword}}))
	}
	return w
}

// run is the run id of night i.
func (w *analystsWorld) run(i int) string { return itoa(w.c.runs[i]) }

// analystsQuestions computes each question's whole answer, keyed by the
// guide's headings.
var analystsQuestions = map[string]func(*analystsWorld) []string{
	"1. The most-followed accounts, and their growth over the last 30 nights": (*analystsWorld).mostFollowed,
	"2. Who followed or unfollowed an account between two nights":             (*analystsWorld).followChanges,
	"3. A creator's videos, one by one":                                       (*analystsWorld).creatorVideos,
	"4. The comments under a creator's most-viewed video":                     (*analystsWorld).videoComments,
	"5. The comments of a post, with their replies":                           (*analystsWorld).comments,
	"6. The accounts two hops from a seed":                                    (*analystsWorld).twoHops,
	"7. The videos of a song over time":                                       (*analystsWorld).songOverTime,
	"8. Search ranks over time":                                               (*analystsWorld).searchRanks,
	"9. What changed since last night":                                        (*analystsWorld).sinceLastNight,
	"10. What a night cost, per endpoint":                                     (*analystsWorld).nightCost,
	"11. How fresh the data is, per account":                                  (*analystsWorld).freshness,
}

// mostFollowed: the latest follower counts and the growth since the first
// snapshot.
func (w *analystsWorld) mostFollowed() []string {
	type acct struct {
		h              string
		latest, gained int64
		nights         int
	}
	var as []acct
	for h, ns := range w.fetched {
		a := acct{h: h, latest: w.m.profiles[ns[len(ns)-1]][h], nights: len(ns)}
		a.gained = a.latest - w.m.profiles[ns[0]][h]
		as = append(as, a)
	}
	slices.SortFunc(as, func(a, b acct) int { return cmp.Or(cmp.Compare(b.latest, a.latest), strings.Compare(a.h, b.h)) })
	var rows []string
	for _, a := range as[:10] {
		gained := "NULL"
		if a.nights > 1 {
			gained = itoa(a.gained)
		}
		rows = append(rows, strings.Join([]string{a.h, itoa(a.latest), gained, strconv.Itoa(a.nights - 1)}, " | "))
	}
	return rows
}

// followChanges: the newcomer's followers new and gone between the first
// and the last night, exactly the sandbox's ChurnChanges (its walks are
// whole).
func (w *analystsWorld) followChanges() []string {
	for i := range analystsDays {
		if !w.m.walks[i][analystsNewcomer].complete {
			w.t.Fatalf("night %d: the newcomer's followers do not fit one page", i+1)
		}
	}
	d, err := sandbox.ChurnChanges(analystsNewcomer, analystsDays[0], analystsDays[w.last])
	if err != nil {
		w.t.Fatal(err)
	}
	if len(d.NewFollowers) == 0 || len(d.LostFollowers) == 0 {
		w.t.Fatalf("the newcomer gained %d and lost %d followers: the question wants both", len(d.NewFollowers), len(d.LostFollowers))
	}
	var rows []string
	for change, hs := range map[string][]string{"followed": d.NewFollowers, "unfollowed": d.LostFollowers} {
		for _, h := range hs {
			fl := w.m.edges[[2]string{h, analystsNewcomer}]
			rows = append(rows, strings.Join([]string{change, h, w.run(fl[0]), w.run(fl[1])}, " | "))
		}
	}
	slices.Sort(rows)
	return rows
}

// creatorVideo is a video of the creator's list with the counters of the
// last night whose walk listed it.
type creatorVideo struct {
	v     oracleAweme
	night int
}

// creatorList is the creator's videos the job's walks listed, most played
// first, each as the last night that listed it saw it.
func (w *analystsWorld) creatorList() []creatorVideo {
	latest := map[string]creatorVideo{}
	for i := range analystsDays {
		for _, v := range w.oracleCreatorPage(analystsCreator, i) {
			latest[v.ID] = creatorVideo{v, i}
		}
	}
	// Its latest snapshot is the creator's list's only when no other list
	// the job walks shows it.
	for i := range analystsDays {
		for _, v := range append(slices.Clone(w.songVideos[i]), w.searches[i]...) {
			if _, ok := latest[v.ID]; ok {
				w.t.Fatalf("night %d: the creator's video %s is also in the song's or the search's list", i+1, v.ID)
			}
		}
	}
	vs := slices.Collect(maps.Values(latest))
	if len(vs) == 0 {
		w.t.Fatal("the creator lists no videos")
	}
	slices.SortFunc(vs, func(a, b creatorVideo) int {
		return cmp.Or(cmp.Compare(b.v.Stats.PlayCount, a.v.Stats.PlayCount), strings.Compare(a.v.ID, b.v.ID))
	})
	return vs
}

// creatorVideos: the creator's videos one by one, most played first.
func (w *analystsWorld) creatorVideos() []string {
	var rows []string
	for _, cv := range w.creatorList() {
		st := cv.v.Stats
		engagement := "NULL"
		if st.PlayCount > 0 {
			engagement = fmt.Sprintf("%.2f", float64(pct(st.DiggCount+st.CommentCount+st.ShareCount, st.PlayCount))/100)
		}
		rows = append(rows, strings.Join([]string{cv.v.ID, itoa(st.PlayCount), itoa(st.DiggCount), itoa(st.CommentCount),
			itoa(st.ShareCount), engagement, w.run(cv.night)}, " | "))
	}
	return rows
}

// videoComments: the first page of comments under the creator's most
// played video, as the last night that walked them saw them.
func (w *analystsWorld) videoComments() []string {
	top := w.creatorList()[0]
	videoURL, _, _ := strings.Cut(top.v.ShareURL, "?")
	// The list is bought the first night the video is on the page walked,
	// and again only on a night its comment count moved (changed_only):
	// its comments, likes included, are as that night's answer has them.
	var comments []oracleSVComment
	walked := int64(-1)
	for i := range analystsDays {
		for _, v := range w.oracleCreatorPage(analystsCreator, i) {
			if v.ID == top.v.ID && v.Stats.CommentCount != walked {
				comments, walked = w.oracleVideoComments(videoURL, i), v.Stats.CommentCount // a video's comments keep their order
			}
		}
	}
	slices.SortFunc(comments, func(a, b oracleSVComment) int {
		return cmp.Or(cmp.Compare(b.DiggCount, a.DiggCount), strings.Compare(a.CID, b.CID))
	})
	var rows []string
	replies := 0
	for _, c := range comments {
		text := []rune(c.Text)
		rows = append(rows, strings.Join([]string{c.User.UniqueID, itoa(c.DiggCount), itoa(c.ReplyTotal), string(text[:min(30, len(text))])}, " | "))
		if c.ReplyTotal > 0 {
			replies++
		}
	}
	if replies == 0 {
		w.t.Fatal("no comment under the creator's most played video has replies")
	}
	// The guide leaves the replies out: a request for each comment with
	// replies under the creators' videos would cost more than the night.
	withReplies := int64(0)
	for _, h := range w.c.job.Seeds.ShortVideo.Profiles {
		for _, v := range w.oracleCreatorPage(h, w.last) {
			u, _, _ := strings.Cut(v.ShareURL, "?")
			for _, c := range w.oracleVideoComments(u, w.last) {
				withReplies += min(c.ReplyTotal, 1)
			}
		}
	}
	if night := w.c.usage[w.last].Credits; withReplies <= night {
		w.t.Errorf("the creators' videos have %d comments with replies, the night cost %d credits: the guide says more", withReplies, night)
	}
	return rows
}

// comments: the post's comments and replies as the last night's answer
// has them.
func (w *analystsWorld) comments() []string {
	comments := w.oracleComments(w.last)
	slices.SortFunc(comments, func(a, b oracleComment) int {
		return cmp.Or(cmp.Compare(b.CommentLikeCount, a.CommentLikeCount), strings.Compare(a.ID, b.ID))
	})
	row := func(author string, c oracleComment) string {
		text := []rune(c.Text)
		return strings.Join([]string{author, itoa(c.CommentLikeCount), nullable(c.ChildCommentCount), string(text[:min(30, len(text))])}, " | ")
	}
	var rows []string
	replies := 0
	for _, c := range comments {
		rows = append(rows, row(c.User.Username, c))
		rs := slices.Clone(c.Replies)
		slices.SortFunc(rs, func(a, b oracleComment) int {
			return cmp.Or(cmp.Compare(b.CommentLikeCount, a.CommentLikeCount), strings.Compare(a.ID, b.ID))
		})
		for _, r := range rs {
			rows = append(rows, row("↳ "+r.User.Username, r))
			replies++
		}
	}
	if replies == 0 {
		w.t.Fatal("the post's comments have no replies")
	}
	return rows
}

// twoHops: the newcomer's followers' followers on the last night.
func (w *analystsWorld) twoHops() []string {
	hop1 := map[string]bool{}
	for _, f := range w.m.walks[w.last][analystsNewcomer].entries {
		hop1[f] = true
	}
	var rows []string
	for f := range hop1 {
		for _, g := range w.m.walks[w.last][f].entries {
			if g != analystsNewcomer && !hop1[g] {
				rows = append(rows, g+" | "+f)
			}
		}
	}
	slices.Sort(rows)
	return rows
}

// songOverTime: the song's usage count and videos night by night.
func (w *analystsWorld) songOverTime() []string {
	var rows []string
	known := map[string]bool{}
	for i := range analystsDays {
		var song struct {
			UsageCount int64 `json:"usageCount"`
		}
		getJSON(w.t, w.contract[i]+"/api/shortvideo/song?id="+analystsSong, &song)
		fresh := 0
		for _, v := range w.songVideos[i] {
			if !known[v.ID] {
				known[v.ID], fresh = true, fresh+1
			}
		}
		rows = append(rows, strings.Join([]string{w.run(i), itoa(song.UsageCount), strconv.Itoa(len(w.songVideos[i])), strconv.Itoa(fresh)}, " | "))
	}
	return rows
}

// searchRanks: each searched video's rank night by night.
func (w *analystsWorld) searchRanks() []string {
	type ranked struct {
		id, author, ranks string
		best              int
	}
	by := map[string]*ranked{}
	for i := range analystsDays {
		for r, v := range w.searches[i] {
			x := by[v.ID]
			if x == nil {
				x = &ranked{id: v.ID, author: v.Author.UniqueID, best: r + 1}
				by[v.ID] = x
			} else {
				x.ranks += " "
			}
			x.ranks += fmt.Sprintf("%s:#%d", w.run(i), r+1)
			x.best = min(x.best, r+1)
		}
	}
	var xs []*ranked
	for _, x := range by {
		xs = append(xs, x)
	}
	slices.SortFunc(xs, func(a, b *ranked) int { return cmp.Or(cmp.Compare(a.best, b.best), strings.Compare(a.id, b.id)) })
	var rows []string
	for _, x := range xs {
		rows = append(rows, strings.Join([]string{x.id, x.author, x.ranks, strconv.Itoa(x.best)}, " | "))
	}
	return rows
}

// sinceLastNight: what changed between the last two nights.
func (w *analystsWorld) sinceLastNight() []string {
	prev := w.last - 1
	firstSeen := 0
	for _, fl := range w.m.edges {
		if fl[0] == w.last {
			firstSeen++
		}
	}
	started, stopped := 0, 0
	for owner, walk := range w.m.walks[w.last] {
		if pw, ok := w.m.walks[prev][owner]; ok && walk.complete && pw.complete {
			d, err := sandbox.ChurnChanges(owner, analystsDays[prev], analystsDays[w.last])
			if err != nil {
				w.t.Fatal(err)
			}
			started, stopped = started+len(d.NewFollowers), stopped+len(d.LostFollowers)
		}
	}
	more, fewer := 0, 0
	for h, n := range w.m.profiles[w.last] {
		if p, ok := w.m.profiles[prev][h]; ok && n > p {
			more++
		} else if ok && n < p {
			fewer++
		}
	}
	known := map[string]bool{}
	for _, v := range w.songVideos[prev] {
		known[v.ID] = true
	}
	newVideos := 0
	for _, v := range w.songVideos[w.last] {
		if !known[v.ID] {
			newVideos++
		}
	}
	seenComments := map[string]bool{}
	newComments := 0
	for i := range analystsDays {
		for _, c := range w.oracleComments(i) {
			for _, x := range append([]oracleComment{c}, c.Replies...) {
				if !seenComments[x.ID] && i == w.last {
					newComments++
				}
				seenComments[x.ID] = true
			}
		}
	}
	for _, n := range []int{firstSeen, started, stopped, more, newVideos, newComments} {
		if n == 0 {
			w.t.Errorf("a change of the last night counts 0: %d %d %d %d %d %d", firstSeen, started, stopped, more, newVideos, newComments)
		}
	}
	return []string{
		"follow edges first seen | " + strconv.Itoa(firstSeen),
		"follows started (lists walked whole both nights) | " + strconv.Itoa(started),
		"follows stopped (lists walked whole both nights) | " + strconv.Itoa(stopped),
		"profiles with more followers | " + strconv.Itoa(more),
		"profiles with fewer followers | " + strconv.Itoa(fewer),
		"videos new on a song | " + strconv.Itoa(newVideos),
		"post comments and replies new | " + strconv.Itoa(newComments),
	}
}

// nightCost: the last night's requests and credits per endpoint: what the
// sandbox counted.
func (w *analystsWorld) nightCost() []string {
	endpoint := map[string]string{
		"/v1/tiktok/profile":          "/shortvideo/profile",
		"/v1/tiktok/user/followers":   "/shortvideo/user/followers",
		"/v1/tiktok/search/keyword":   "/shortvideo/search/keyword",
		"/v1/tiktok/song":             "/shortvideo/song",
		"/v1/tiktok/song/videos":      "/shortvideo/song/videos",
		"/v2/instagram/post/comments": "/photosocial/post/comments",
		"/v3/tiktok/profile/videos":   "/shortvideo/profile/videos",
		"/v1/tiktok/video/comments":   "/shortvideo/video/comments",
	}
	type use struct {
		ep                string
		requests, credits int64
	}
	var us []use
	var total use
	for path, u := range w.c.usage[w.last].ByEndpoint {
		ep, ok := endpoint[path]
		if !ok {
			w.t.Fatalf("the crawl called %s: add it to the test's endpoint names", path)
		}
		us = append(us, use{ep, u.Requests, u.Credits})
		total.requests, total.credits = total.requests+u.Requests, total.credits+u.Credits
	}
	slices.SortFunc(us, func(a, b use) int { return cmp.Or(cmp.Compare(b.credits, a.credits), strings.Compare(a.ep, b.ep)) })
	var rows []string
	for _, u := range append(us, use{"total", total.requests, total.credits}) {
		rows = append(rows, strings.Join([]string{u.ep, itoa(u.requests), itoa(u.credits)}, " | "))
	}
	return rows
}

// freshness: each fetched account's latest profile and followers walk.
func (w *analystsWorld) freshness() []string {
	type fresh struct {
		h     string
		night int
	}
	var fs []fresh
	for h, ns := range w.fetched {
		fs = append(fs, fresh{h, ns[len(ns)-1]})
	}
	slices.SortFunc(fs, func(a, b fresh) int { return cmp.Or(cmp.Compare(a.night, b.night), strings.Compare(a.h, b.h)) })
	var rows []string
	stale := 0
	for _, f := range fs {
		complete := "f"
		if w.m.walks[f.night][f.h].complete {
			complete = "t"
		}
		rows = append(rows, strings.Join([]string{f.h, w.run(f.night), strconv.Itoa(w.last - f.night), w.run(f.night), complete}, " | "))
		if f.night < w.last {
			stale++
		}
	}
	if stale == 0 {
		w.t.Error("no account is stale: the freshness question shows nothing")
	}
	return rows
}

// TestAnalystsGuide runs every question of docs/analysts.md on four nights
// of its job and checks each whole answer against the world's, and the rows
// the guide shows against the first rows the query returns.
func TestAnalystsGuide(t *testing.T) {
	t.Parallel()
	jobText, qs := readAnalystsGuide(t)
	if len(qs) < 10 {
		t.Errorf("the guide has %d questions, want at least 10", len(qs))
	}
	c := runAnalystsNights(t, jobText)
	w := newAnalystsWorld(t, c)
	answered := map[string]bool{}
	for _, q := range qs {
		answer, ok := analystsQuestions[q.title]
		if !ok {
			t.Errorf("question %q has no expected answer in this test", q.title)
			continue
		}
		answered[q.title] = true
		exp := answer(w)
		cols, rows := textResult(t, c.b, q.sql)
		if got := canon(rows); !slices.Equal(got, exp) {
			t.Errorf("%s: the query's answer is not the world's\n got  %q\n want %q", q.title, got, exp)
		}
		table := psqlTable(cols, rows)
		var shown guideQuestion
		if err := parseShown(&shown, strings.Split(strings.TrimSuffix(table, "\n"), "\n")); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(q.head, shown.head) || q.total != shown.total || q.elided != (len(q.shown) < len(rows)) ||
			!slices.EqualFunc(q.shown, rows[:min(len(q.shown), len(rows))], func(a []string, b []*string) bool {
				return slices.Equal(a, canonCells(b))
			}) {
			t.Errorf("%s: the guide shows another result; the query returns:\n```text\n%s```", q.title, table)
		}
	}
	for title := range analystsQuestions {
		if !answered[title] {
			t.Errorf("the guide lost its question %q", title)
		}
	}
}

// canonCells is a row as psql shows it: NULL empty.
func canonCells(r []*string) []string {
	out := make([]string, len(r))
	for i, v := range r {
		if v != nil {
			out[i] = *v
		}
	}
	return out
}
