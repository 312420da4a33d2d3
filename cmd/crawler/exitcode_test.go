package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A run that finishes with a failed task exits 4 and says how to see why
// and how to retry; status lists the reason with the task's key; a plain
// resume buys nothing again (and still exits 4); --retry-failed re-queues
// the failed list at the page that failed and buys exactly the missing
// pages. A skipped task (404) is not a failure.
func TestFailedTasksExit4AndRetryFailed(t *testing.T) {
	t.Parallel()
	// The followers list's second page answers 400 once.
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Script: map[string][]int{
		"/shortvideo/user/followers": {0, 400},
	}}})
	db := pgtest.DB(t)
	job := writeJob(t, fmt.Sprintf(`name: exit-four
api: {base_url: %s, max_retries: 1}
limits: {workers: 2}
expand: {followers: {}}
seeds:
  shortvideo:
    profiles: [acct_f120_g0, missing_one]
`, up.url))
	p := startCrawler(t, db, "run", job)
	if code := p.wait(); code != exitFailed {
		t.Fatalf("exit %d, want %d: %s", code, exitFailed, p.stderr.String())
	}
	for _, want := range []string{"run 1 finished with 1 failed tasks", "crawler status --run 1", "crawler run --resume 1 --retry-failed " + job} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
		}
	}
	// profile + followers page 1; the 400 and the 404 are not billed.
	if b := up.sb.Usage(cliKey).Billable; b != 2 {
		t.Fatalf("billable = %d, want 2", b)
	}
	secUID := "MS4wLjABAAAAYWNjdF9mMTIwX2cw" // secUid of acct_f120_g0
	st := startCrawler(t, db, "status")
	if code := st.wait(); code != 0 {
		t.Fatalf("status exit %d: %s", code, st.stderr.String())
	}
	out := strings.Join(strings.Fields(st.stdout.String()), " ")
	for _, want := range []string{
		"failed shortvideo.followers 1 (/shortvideo/user/followers: bad_request (HTTP 400)) e.g. " + secUID +
			": /shortvideo/user/followers: bad_request (HTTP 400): injected fault",
		"skipped shortvideo.profile 1 (not found: /shortvideo/profile) e.g. missing_one: not found",
		"credits billed 2 (no cap)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, st.stdout.String())
		}
	}

	// A plain resume does not buy the failed page again.
	r := startCrawler(t, db, "run", "--resume", "1", job)
	if code := r.wait(); code != exitFailed {
		t.Fatalf("plain resume exit %d, want %d: %s", code, exitFailed, r.stderr.String())
	}
	if b := up.sb.Usage(cliKey).Billable; b != 2 {
		t.Errorf("billable after a plain resume = %d, want still 2", b)
	}

	r = startCrawler(t, db, "run", "--resume", "1", "--retry-failed", job)
	if code := r.wait(); code != 0 {
		t.Fatalf("--retry-failed exit %d, want 0: %s", code, r.stderr.String())
	}
	if !strings.Contains(r.stdout.String(), "run 1: 1 failed tasks re-queued") {
		t.Errorf("stdout: %s", r.stdout.String())
	}
	// Pages 2 and 3 of the list: the first page is not bought again, the
	// 404 is not retried.
	if b := up.sb.Usage(cliKey).Billable; b != 4 {
		t.Errorf("billable after --retry-failed = %d, want 4", b)
	}
	if d := up.duplicates(); len(d) != 0 {
		t.Errorf("bought twice: %v", d)
	}
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	var state, reason string
	var pages, items, follows int
	if err := conn.QueryRow(context.Background(), `SELECT state, coalesce(reason, ''), pages, items, (SELECT count(*) FROM shortvideo.follows)
		FROM crawl.tasks WHERE kind = 'shortvideo.followers'`).Scan(&state, &reason, &pages, &items, &follows); err != nil {
		t.Fatal(err)
	}
	if state != "done" || pages != 3 || items != 120 || follows != 120 || strings.Contains(reason, "400") {
		t.Errorf("followers task %s %q pages %d items %d, follows %d; want done, 3 pages, 120 items and rows", state, reason, pages, items, follows)
	}
}

// Only done and skipped tasks: exit 0. --retry-failed without --resume is
// bad input.
func TestSkippedTasksExit0(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := writeJob(t, fmt.Sprintf(`name: exit-zero
api: {base_url: %s}
expand: {}
seeds:
  shortvideo:
    profiles: [fine_f0_g0, missing_one, missing_two]
  photosocial:
    profiles: [private_person]
`, up.url))
	p := startCrawler(t, db, "run", job)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, p.stderr.String())
	}
	r := invoke(t, map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}, "run", "--retry-failed", job)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--retry-failed needs --resume") {
		t.Errorf("--retry-failed alone: exit %d %q", r.code, r.stderr)
	}
	help := invoke(t, nil, "run", "--help")
	for _, want := range []string{"4 it finished but some tasks failed", "-retry-failed"} {
		if !strings.Contains(help.stdout, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
}
