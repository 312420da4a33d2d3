package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/output/export"
	"github.com/socialcrawl/crawler/testkit/exportcheck"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// readManifest decodes an export's manifest with the export's own types.
func readManifest(t *testing.T, dir string) *export.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, export.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// sameFiles fails unless the two exports hold the same files, byte for
// byte (the manifest too when withManifest).
func sameFiles(t *testing.T, a, b string, withManifest bool) {
	t.Helper()
	files := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if d.IsDir() || (!withManifest && d.Name() == export.ManifestName) {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel], err = os.ReadFile(p)
			return err
		})
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) {
		t.Errorf("%s has %d files, %s %d", a, len(fa), b, len(fb))
	}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("%s differs between %s and %s", name, a, b)
		}
	}
}

// exportJob is reportJob without the followers' profiles (and their
// lists): every endpoint, a list capped by its page limit and lists walked
// whole, accounts seen each night (growth), so every view reportJob's
// harvest fills has rows (660 rows in all instead of 34,932), at a third
// of the test's CPU. Exports of many FETCH batches and part files are
// package output/export's TestExportLarge.
const exportJob = `name: report-test
api: {base_url: http://127.0.0.1:1/api, max_retries: 1}
limits: {workers: 4, max_pages: 2, max_depth: 1}
seeds:
  shortvideo:
    profiles: ["@star_f120_g10", "@small_f30_g4", "@tiny_f5_g2_r1", missing_account, missing_too]
    keyword_searches: [street food n40]
    songs: [hit_v60]
expand:
  followers: {max_pages: 1}
  following: {max_pages: 1}
  song_videos: {max_pages: 1}
`

// TestExportHarvest exports a three-night sandbox harvest and reads every
// file back with xitongsys/parquet-go's column reader (and encoding/csv), comparing each
// row with PostgreSQL; checks the manifest's runs, credits, completeness and
// checksums, that a second export gives the same bytes, that --verify finds
// a changed byte, and that --as-of 1 after three nights gives, for every
// object the schema keeps per run, the very files an export made right
// after night 1 held.
//
// The nights and the four whole Parquet exports run in the crawler binary
// (runBin, built without the race detector): in this process, under it,
// they cost about two thirds of the test's CPU, and the crawl and the
// export are raced by package pipeline's and output/export's own tests.
// The CSV export, --verify and the refusals stay in process (invoke), so
// the command's own code still runs under the detector.
func TestExportHarvest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	binEnv := []string{"DATABASE_URL=" + db, "CRAWLER_API_KEY=" + cliKey}
	jobPath := writeJob(t, exportJob)
	dir := t.TempDir()
	var billable int64
	night := func(day int64) {
		sb, err := sandbox.New(sandbox.Config{APIKeys: []string{cliKey}, WorldTime: day})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(sb.Handler())
		defer srv.Close()
		if r := runBin(t, binEnv, "run", "--base-url", srv.URL+"/api", "--live", "off", "--log-level", "error", jobPath); r.code != 0 {
			t.Fatalf("night %d: exit %d\n%s", day, r.code, r.stderr)
		}
		billable += sb.Usage(cliKey).Credits
	}
	night(0)
	afterNight1 := filepath.Join(dir, "after-night-1")
	if r := runBin(t, binEnv, "export", "--out", afterNight1); r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	night(30)
	night(60)

	latest := filepath.Join(dir, "latest")
	r := runBin(t, binEnv, "export", "--out", latest)
	if r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "job report-test: runs 1-3") || !strings.Contains(r.stdout, "walked whole") {
		t.Errorf("export's summary:\n%s", r.stdout)
	}
	conn := testConn(t, db)
	identity := func(o string) string { return o }
	counts, err := exportcheck.Compare(ctx, conn, latest, identity)
	if err != nil {
		t.Fatal(err)
	}
	var views int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_views WHERE schemaname IN ('shortvideo', 'photosocial', 'crawl')`).Scan(&views); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	if len(counts) != views || counts["shortvideo.users_latest"] == 0 || counts["shortvideo.user_growth"] == 0 || counts["shortvideo.follow_walks"] == 0 {
		t.Errorf("rows compared per view (%d views in the catalog): %v", views, counts)
	}
	t.Logf("%d rows of %d views compared with PostgreSQL", total, len(counts))

	// Typed columns: ids the platform gives as 19-digit strings stay
	// strings, run ids int64, timestamps UTC microseconds.
	types, err := exportcheck.ParquetTypes(filepath.Join(latest, "shortvideo.videos_latest", "part-00000.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for col, want := range map[string]string{"video_id": "string", "run_id": "int64", "captured_at": "timestamp[us, utc]", "play_count": "int64"} {
		if types[col] != want {
			t.Errorf("videos_latest.%s: the footer declares %s, want %s", col, types[col], want)
		}
	}
	var longIDs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM shortvideo.videos WHERE video_id ~ '^[0-9]{19}$'`).Scan(&longIDs); err != nil {
		t.Fatal(err)
	}
	if longIDs == 0 {
		t.Error("the harvest has no 19-digit video id: the exactness check checks nothing")
	}

	// The manifest: runs, credits and completeness as PostgreSQL has them.
	m := readManifest(t, latest)
	if len(m.Runs) != 3 || len(m.Jobs) != 1 || m.Jobs[0].Name != "report-test" || len(m.Jobs[0].Fingerprints) != 1 || m.AsOf != nil || m.LastRun != 3 {
		t.Errorf("manifest runs %+v, jobs %+v, as of %v, last run %d", m.Runs, m.Jobs, m.AsOf, m.LastRun)
	}
	var billed int64
	for _, c := range m.CreditsByEndpoint {
		billed += c.Billed
	}
	if billed != billable || billed == 0 {
		t.Errorf("manifest: %d credits billed, the sandbox counted %d", billed, billable)
	}
	lists := map[[2]string]int64{}
	for _, c := range m.Completeness {
		if c.Kind == "shortvideo.followers" {
			lists[[2]string{c.Outcome, c.Meaning}] += c.Lists
		}
	}
	var whole, capped int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE complete), count(*) FILTER (WHERE reason = 'page_limit')
		FROM shortvideo.follow_walks WHERE list = 'followers'`).Scan(&whole, &capped); err != nil {
		t.Fatal(err)
	}
	if lists[[2]string{"done_end", "walked whole"}] != whole || lists[[2]string{"done_page_limit", "capped at its page limit"}] != capped || whole == 0 || capped == 0 {
		t.Errorf("followers lists in the manifest %v; follow_walks: %d whole, %d capped", lists, whole, capped)
	}

	// Deterministic: the same database gives the same bytes.
	again := filepath.Join(dir, "again")
	if r := runBin(t, binEnv, "export", "--out", again); r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	sameFiles(t, latest, again, true)

	// --verify: all match; a byte changed is exit 1 naming the file; no
	// manifest is exit 2; a non-empty directory is not exported into.
	if r := invoke(t, nil, "export", "--verify", latest); r.code != 0 || !strings.Contains(r.stdout, "match the manifest") {
		t.Errorf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	victim := filepath.Join(again, "shortvideo.users_latest", "part-00000.parquet")
	b, _ := os.ReadFile(victim)
	b[len(b)/2] ^= 1
	os.WriteFile(victim, b, 0o644)
	if r := invoke(t, nil, "export", "--verify", again); r.code != exitFailure || !strings.Contains(r.stderr, "shortvideo.users_latest/part-00000.parquet: sha256") {
		t.Errorf("verify of a changed file: exit %d\n%s", r.code, r.stderr)
	}
	if r := invoke(t, nil, "export", "--verify", dir); r.code != exitUsage || !strings.Contains(r.stderr, "no export manifest") {
		t.Errorf("verify without a manifest: exit %d\n%s", r.code, r.stderr)
	}
	if r := invoke(t, env, "export", "--out", again); r.code != exitUsage || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("export into a full directory: exit %d\n%s", r.code, r.stderr)
	}

	// CSV, and a chosen list of tables and views.
	csvDir := filepath.Join(dir, "csv")
	if r := invoke(t, env, "export", "--out", csvDir, "--format", "csv", "--tables", "shortvideo.videos_latest, crawl.runs,shortvideo.user_snapshots"); r.code != 0 {
		t.Fatalf("export csv: exit %d\n%s", r.code, r.stderr)
	}
	if counts, err := exportcheck.Compare(ctx, conn, csvDir, identity); err != nil || len(counts) != 3 || counts["crawl.runs"] != 3 {
		t.Errorf("csv: %v %v", counts, err)
	}
	if r := invoke(t, env, "export", "--out", filepath.Join(dir, "x"), "--tables", "shortvideo.nope"); r.code != exitUsage || !strings.Contains(r.stderr, "shortvideo.nope") {
		t.Errorf("unknown table: exit %d\n%s", r.code, r.stderr)
	}
	if r := invoke(t, env, "export", "--out", filepath.Join(dir, "x"), "--as-of", "9"); r.code != exitUsage || !strings.Contains(r.stderr, "no such run 9") {
		t.Errorf("unknown run: exit %d\n%s", r.code, r.stderr)
	}

	// --as-of 1 after three nights: each object the schema keeps per run is
	// what the export after night 1 held, byte for byte; the others say in
	// the manifest what is not as run 1 left it.
	asOf1 := filepath.Join(dir, "as-of-1")
	if r := runBin(t, binEnv, "export", "--out", asOf1, "--as-of", "1"); r.code != 0 {
		t.Fatalf("export --as-of 1: exit %d\n%s", r.code, r.stderr)
	}
	ma, m1 := readManifest(t, asOf1), readManifest(t, afterNight1)
	if ma.AsOf == nil || *ma.AsOf != 1 || len(ma.Runs) != 1 || len(ma.NotReconstructed) == 0 {
		t.Errorf("as-of manifest: as of %v, runs %+v, not reconstructed %v", ma.AsOf, ma.Runs, ma.NotReconstructed)
	}
	exact := 0
	for i, o := range ma.Objects {
		cut := true
		for _, n := range o.AsOf {
			cut = cut && strings.HasSuffix(n, "exact")
		}
		if !cut {
			continue
		}
		exact++
		if o.Rows != m1.Objects[i].Rows || o.Files[0].SHA256 != m1.Objects[i].Files[0].SHA256 {
			t.Errorf("%s as of run 1: %d rows (sha256 %s); after night 1: %d rows (%s)", o.Name, o.Rows, o.Files[0].SHA256[:12],
				m1.Objects[i].Rows, m1.Objects[i].Files[0].SHA256[:12])
		}
	}
	if exact < 8 {
		t.Errorf("only %d objects cut exactly as of run 1", exact)
	}
	if ma.CreditsByEndpoint[0] != m1.CreditsByEndpoint[0] || len(ma.Completeness) != len(m1.Completeness) {
		t.Errorf("as-of credits %+v completeness %d; after night 1: %+v, %d", ma.CreditsByEndpoint[0], len(ma.Completeness),
			m1.CreditsByEndpoint[0], len(m1.Completeness))
	}
}
