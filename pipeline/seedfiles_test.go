package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
)

// fileJob writes files (name -> content) beside a job file whose api
// section points at the sandbox and whose other sections are body, and
// loads it; it returns the job and the directory.
func (b *bundle) fileJob(t *testing.T, body string, files map[string]string) (*jobfile.Job, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b.loadJob(t, dir, body), dir
}

func (b *bundle) loadJob(t *testing.T, dir, body string) *jobfile.Job {
	t.Helper()
	path := filepath.Join(dir, "job.yaml")
	text := fmt.Sprintf("name: files\napi:\n  base_url: %s\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n%s", b.baseURL, body)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	job, err := jobfile.Load(path)
	if err != nil {
		t.Fatalf("job: %v\n%s", err, text)
	}
	return job
}

// handles is n distinct handles, one a line, each dup-th line followed by
// a repeat of the line before (so the file holds n + n/dup values).
func handles(n, dup int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "h%07d\n", i)
		if dup > 0 && i%dup == dup-1 {
			fmt.Fprintf(&sb, "@h%07d\n", i)
		}
	}
	return sb.String()
}

// seedState is the run's seeding progress and its tasks: all, distinct
// (kind, key), and of kind.
func (b *bundle) seedState(t *testing.T, runID int64, kind string) (pending bool, tasks, distinct, ofKind int64) {
	t.Helper()
	ctx := context.Background()
	if err := b.pool.QueryRow(ctx, `SELECT seeds_pending FROM crawl.runs WHERE id = $1`, runID).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	err := b.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (kind, key)), count(*) FILTER (WHERE kind = $2) FROM crawl.tasks WHERE run_id = $1`, runID, kind).
		Scan(&tasks, &distinct, &ofKind)
	if err != nil {
		t.Fatal(err)
	}
	return pending, tasks, distinct, ofKind
}

// The inline list and the file are one list: a value in both, or twice in
// the file, is one task; a CSV column adds to another list; the run works
// them all.
func TestSeedFileUnionRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job, _ := b.fileJob(t, `limits: {max_depth: 0}
expand: {}
seeds:
  shortvideo:
    profiles: ["@sf_a", sf_b]
    profiles_file: handles.txt
  photosocial:
    embeds_file: {path: accounts.csv, column: handle}
`, map[string]string{
		"handles.txt":  "# research list\nsf_b\nsf_c\n\n@sf_c\nsf_d\n",
		"accounts.csv": "id,handle,note\n1,natgeo,\"a, b\"\n2,,empty\n3,nasa,x\n",
	})
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	got := b.tasks(t, sum.RunID)
	want := map[string]bool{}
	for _, k := range []string{"sf_a", "sf_b", "sf_c", "sf_d"} {
		want[kinds.KindSVProfile+" "+k+" done done 1"] = true
	}
	for _, k := range []string{"natgeo", "nasa"} {
		want["photosocial.embed "+k+" done done 1"] = true
	}
	if len(got) != len(want) {
		t.Fatalf("tasks:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected task %q (tasks:\n%s)", g, strings.Join(got, "\n"))
		}
	}
	// The run's job records each file with its hash and count.
	var files string
	if err := b.pool.QueryRow(context.Background(), `SELECT job->'seeds'->'files'->'seeds.shortvideo.profiles'->>'values' FROM crawl.runs WHERE id = $1`, sum.RunID).Scan(&files); err != nil || files != "4" {
		t.Errorf("recorded values = %q (%v), want 4", files, err)
	}
}

// A seeding killed between two batches goes on from the last one
// committed: the same tasks as an uninterrupted seeding, no duplicate, no
// loss; two processes finishing it together take turns. In either form: a
// CSV file's offsets counted its header twice, and a resumed seeding
// skipped the values after the first batches.
func TestSeedFileResumesWhereItStopped(t *testing.T) {
	t.Parallel()
	const n = 25_000
	var csv strings.Builder
	csv.WriteString("id,handle\n")
	for i, h := range strings.Fields(handles(n, 7)) {
		fmt.Fprintf(&csv, "%d,%s\n", i, h)
	}
	for _, form := range []struct{ name, key, file, text string }{
		{"text", "h.txt", "h.txt", handles(n, 7)},
		{"csv", "{path: h.csv, column: handle}", "h.csv", csv.String()},
	} {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			testSeedFileResumes(t, n, "seeds:\n  shortvideo:\n    profiles: [h0000003, inline_only]\n    profiles_file: "+form.key+"\n",
				map[string]string{form.file: form.text})
		})
	}
}

func testSeedFileResumes(t *testing.T, n int64, seeds string, files map[string]string) {
	b := setup(t)
	job, _ := b.fileJob(t, seeds, files)
	ctx := context.Background()
	runID, err := pipeline.CreateRun(ctx, b.pool, job, job.SeedTasks())
	if err != nil {
		t.Fatal(err)
	}
	if pending, tasks, _, _ := b.seedState(t, runID, kinds.KindSVProfile); !pending || tasks != 2 {
		t.Fatalf("created: pending %v, %d tasks; want pending with the 2 inline seeds", pending, tasks)
	}
	// Killed after 3 batches of 1000 values.
	if _, err := pipeline.SeedFilesBatches(ctx, b.pool, job, runID, 1000, 3); err != nil {
		t.Fatal(err)
	}
	var offset int64
	if err := b.pool.QueryRow(ctx, `SELECT seed_offset FROM crawl.runs WHERE id = $1`, runID).Scan(&offset); err != nil || offset == 0 {
		t.Fatalf("seed_offset %d (%v), want past the first batches", offset, err)
	}
	pending, tasks, _, _ := b.seedState(t, runID, kinds.KindSVProfile)
	// 3000 values hold 3000*7/8 distinct handles (each 8th repeats), 1 of them inline.
	if !pending || tasks != 1+3000*7/8+1-1 {
		t.Errorf("after 3 batches: pending %v, %d tasks; want pending, %d", pending, tasks, 1+3000*7/8)
	}
	// A cancelled batch writes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pipeline.SeedFiles(cctx, b.pool, job, runID, nil); err == nil {
		t.Fatal("seeding with a cancelled context succeeded")
	}
	// Two processes finish it.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { _, errs[i] = pipeline.SeedFilesBatches(ctx, b.pool, job, runID, 700, -1) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	pending, tasks, distinct, profiles := b.seedState(t, runID, kinds.KindSVProfile)
	if pending || tasks != n+1 || distinct != tasks || profiles != tasks {
		t.Errorf("seeded: pending %v, %d tasks (%d distinct, %d profiles); want %d, no duplicates", pending, tasks, distinct, profiles, n+1)
	}
	// Nothing is left to seed: a later call reads nothing.
	if v, err := pipeline.SeedFiles(ctx, b.pool, job, runID, nil); err != nil || v != 0 {
		t.Errorf("seeding a seeded run read %d values (%v)", v, err)
	}
}

// A run is not done while its seeding is unfinished, even with an empty
// frontier; Run finishes the seeding before its workers start.
func TestSeedFilePendingRunNotDone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job, _ := b.fileJob(t, "limits: {max_depth: 0}\nexpand: {}\nseeds:\n  shortvideo:\n    profiles_file: h.txt\n",
		map[string]string{"h.txt": "pd_a\npd_b\npd_c\n"})
	ctx := context.Background()
	runID, err := pipeline.CreateRun(ctx, b.pool, job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pipeline.FinishRun(ctx, b.pool, runID, "test", "done", ""); err != nil || got == "done" {
		t.Fatalf("FinishRun(done) of an unseeded run = %q, %v; want it refused", got, err)
	}
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %+v, %v", sum, err)
	}
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'done'`, runID); n != 3 {
		t.Errorf("%d tasks done, want 3", n)
	}
}

// The fingerprint includes each file's content: the same file is the same
// job, a changed one a changed job; and an unfinished seeding refuses to
// go on in a changed file (its offsets would mean nothing there).
func TestSeedFileFingerprint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := "seeds:\n  shortvideo:\n    profiles: [fp_a]\n    profiles_file: h.txt\n"
	job, dir := b.fileJob(t, body, map[string]string{"h.txt": handles(3000, 0)})
	inline := b.job(t, "seeds:\n  shortvideo:\n    profiles: [fp_a]\n")
	fp := pipeline.Fingerprint(job)
	if fp == pipeline.Fingerprint(inline) {
		t.Error("a seed file does not change the fingerprint")
	}
	if again := b.loadJob(t, dir, body); pipeline.Fingerprint(again) != fp {
		t.Error("the same file gives another fingerprint")
	}
	ctx := context.Background()
	runID, err := pipeline.CreateRun(ctx, b.pool, job, job.SeedTasks())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.SeedFilesBatches(ctx, b.pool, job, runID, 1000, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "h.txt"), []byte("fp_x\n"+handles(3000, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := b.loadJob(t, dir, body)
	if pipeline.Fingerprint(changed) == fp {
		t.Error("a changed file gives the same fingerprint")
	}
	if _, err := pipeline.SeedFiles(ctx, b.pool, changed, runID, nil); !errors.Is(err, pipeline.ErrSeedFilesChanged) {
		t.Errorf("seeding on in a changed file: %v, want ErrSeedFilesChanged", err)
	}
	// The job loaded before the change sees a file of another size.
	if _, err := pipeline.SeedFiles(ctx, b.pool, job, runID, nil); err == nil || !strings.Contains(err.Error(), "changed since the job was loaded") {
		t.Errorf("seeding from a file changed after loading: %v", err)
	}
}
