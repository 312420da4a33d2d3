package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/runs"
)

// dataTables lists the data tables (schemas shortvideo and photosocial).
func (b *bundle) dataTables(t *testing.T) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT schemaname || '.' || tablename FROM pg_tables WHERE schemaname IN ('shortvideo', 'photosocial') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dump is the full content of every data table, one JSON text per row in
// order, without the columns PostgreSQL stamps with now() when a row is
// written (captured_at, updated_at): a replay writes later.
func (b *bundle) dump(t *testing.T) map[string][]string {
	return b.dumpRows(t, `(to_jsonb(x) - 'captured_at' - 'updated_at')::text`)
}

// dumpWhole is dump with every column, the stamps included.
func (b *bundle) dumpWhole(t *testing.T) map[string][]string {
	return b.dumpRows(t, `to_jsonb(x)::text`)
}

// dumpRows is every data table's rows as row (an expression of x, the
// table's row), in order.
func (b *bundle) dumpRows(t *testing.T, row string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range b.dataTables(t) {
		rows, err := b.pool.Query(context.Background(),
			fmt.Sprintf(`SELECT %s FROM %s x ORDER BY 1`, row, table))
		if err != nil {
			t.Fatal(err)
		}
		lines := []string{}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		out[table] = lines
	}
	return out
}

// TestReplayRebuildsRunFromArchive: a harvest of every seed kind and edge
// with archive on keeps one compressed body per committed page; after its
// data rows are deleted, a replay rebuilds every data table exactly (full
// contents) without one request upstream. The harvest is shared with
// TestEverySeedKindAndEdge; this test works on its own copy.
func TestReplayRebuildsRunFromArchive(t *testing.T) {
	t.Parallel()
	b, sum := everything(t)
	if sum.State != "done" {
		t.Fatalf("state %s: %s", sum.State, sum.Reason)
	}
	archived := b.count(t, `SELECT count(*) FROM crawl.pages WHERE run_id = $1`, sum.RunID)
	if archived != sum.Pages || archived == 0 {
		t.Fatalf("archived pages = %d, committed pages = %d", archived, sum.Pages)
	}
	// Each archived page is the page its task committed: the page numbers
	// of every task run 0..pages-1 (a list's last page included).
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks t WHERE run_id = $1 AND pages <> (SELECT count(*) FROM crawl.pages p WHERE p.task_id = t.id)
	                    AND state = 'done'`, sum.RunID); n != 0 {
		t.Errorf("%d done tasks whose archived pages differ from their page count", n)
	}
	if n := b.count(t, `SELECT count(*) FROM crawl.pages WHERE body_bytes <= 0 OR octet_length(body) * 2 >= body_bytes AND body_bytes > 2000`); n != 0 {
		t.Errorf("%d archived bodies not compressed", n)
	}
	var raw, packed int64
	if err := b.pool.QueryRow(context.Background(), `SELECT sum(body_bytes), sum(octet_length(body)) FROM crawl.pages`).Scan(&raw, &packed); err != nil {
		t.Fatal(err)
	}
	t.Logf("archive: %d pages, %d bytes of bodies kept in %d (%.1f:1)", archived, raw, packed, float64(raw)/float64(packed))
	before := b.dump(t)
	var rows int
	for _, r := range before {
		rows += len(r)
	}
	billable := b.sandbox.Usage(testKey)

	tables := b.dataTables(t)
	if _, err := b.pool.Exec(context.Background(), "TRUNCATE "+joinComma(tables)); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.users`); n != 0 {
		t.Fatalf("users after truncate = %d", n)
	}
	rs, err := runs.Replay(context.Background(), b.pool, sum.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Pages != archived || rs.Failed != 0 || rs.Requests != archived {
		t.Errorf("replay = %+v, want %d pages, %d requests answered from the archive, none failed", rs, archived, archived)
	}
	if rs.Rows != sum.Rows {
		t.Errorf("replay wrote %d rows, the harvest %d", rs.Rows, sum.Rows)
	}
	after := b.dump(t)
	for _, table := range tables {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("%s: %d rows before, %d after replay; first difference:\n%s", table, len(before[table]), len(after[table]),
				firstRowDiff(before[table], after[table]))
		}
	}
	if u := b.sandbox.Usage(testKey); u.Billable != billable.Billable || u.Requests != billable.Requests {
		t.Errorf("sandbox billable %d -> %d, requests %d -> %d during the replay (harvest pages %d)",
			billable.Billable, u.Billable, billable.Requests, u.Requests, sum.Pages)
	}
	t.Logf("harvest: %d rows in %.3fs (%.0f rows/s); replay: %d rows (%d table rows) in %.3fs (%.0f rows/s)",
		rs.HarvestRows, rs.HarvestSeconds, rs.HarvestRowsPerSecond(), rs.Rows, rows, rs.Elapsed.Seconds(), rs.RowsPerSecond())
}

// TestReplayWithoutArchive: a run whose job did not set archive has
// nothing to replay, and says so.
func TestReplayWithoutArchive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sum := b.run(t, b.job(t, "seeds:\n  shortvideo:\n    profiles: [solo_f0_g7]\n"))
	if n := b.count(t, `SELECT count(*) FROM crawl.pages`); n != 0 {
		t.Fatalf("archived %d pages without archive: true", n)
	}
	if _, err := runs.Replay(context.Background(), b.pool, sum.RunID, nil); err == nil || !errorsIs(err, runs.ErrNoArchive) {
		t.Errorf("replay = %v, want ErrNoArchive", err)
	}
	if _, err := runs.Replay(context.Background(), b.pool, sum.RunID+100, nil); !errorsIs(err, runs.ErrNoRun) {
		t.Errorf("replay of no run = %v, want runs.ErrNoRun", err)
	}
}

func firstRowDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("row %d\n before: %.400s\n after:  %.400s", i, x, y)
		}
	}
	return ""
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// Replaying an old run over a newer one moves no entity backwards: every
// data table holds exactly what it held after the newer run, whole rows,
// bookkeeping included (updated_at, last_seen_run: the replay changes
// nothing, so no row says it changed), and the old run's snapshots are
// rewritten as they were.
func TestReplayOldRunOverNewer(t *testing.T) {
	t.Parallel()
	// Lists of 10 a page: what is compared is whole tables, whatever their
	// size (at 50 a page the two runs and the replay wrote five times the
	// rows).
	const pageSize = 10
	b := setupWith(t, sandbox.Config{PageSize: pageSize})
	// Every family of entity the upserts keep: accounts, follow edges,
	// songs, videos, comments, reels and their transcripts, photo profiles.
	const body = `archive: true
limits: {max_pages: 2}
seeds:
  shortvideo: {profiles: [hub_f60_g12], songs: [tune_v75], keyword_searches: [cats n30]}
  photosocial:
    profiles: [brand_business]
    posts: ["https://www.photosocial.example/p/post_c120/"]
    reels_searches: [surf n12]
expand: {followers: {}, following: {}, song_videos: {}, search_results: {}, comments: {max_pages: 2}, reel_transcripts: {}}
`
	job := b.job(t, body)
	old := b.run(t, job)
	if old.State != "done" {
		t.Fatalf("old run: %+v", old)
	}
	// A month later the world has moved: counters, lists and raw answers.
	later, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: 30, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(later.Handler())
	t.Cleanup(srv.Close)
	b.baseURL = srv.URL + "/api"
	newer := b.run(t, b.job(t, body))
	if newer.State != "done" {
		t.Fatalf("newer run: %+v", newer)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.users WHERE last_seen_run = $1 AND first_seen_run = $2`, newer.RunID, old.RunID); n == 0 {
		t.Fatal("no account seen by both runs: the test would prove nothing")
	}
	before := b.dumpWhole(t)
	rs, err := runs.Replay(context.Background(), b.pool, old.RunID, nil)
	if err != nil || rs.Failed != 0 || rs.Pages == 0 {
		t.Fatalf("replay: %+v, %v", rs, err)
	}
	after := b.dumpWhole(t)
	for _, table := range b.dataTables(t) {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("%s: the old run's replay changed it; first difference:\n%s", table, firstRowDiff(before[table], after[table]))
		}
	}
}
