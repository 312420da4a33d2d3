package events_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/output/events"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainMigrated(m) }

// Processes that end one run together send its event once; the run
// continued and ended again gets a second one; a run still running none.
func TestAtEndClaimsOncePerEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	t.Cleanup(srv.Close)
	job, err := jobfile.Parse("job.yaml", []byte("name: claim\napi: {base_url: https://api.example.com/api}\nseeds: {shortvideo: {profiles: [a]}}\n"+
		"events: {webhooks: [{url: "+srv.URL+", secret_env: CRAWLER_S}], timeout: 5s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	if err := pool.QueryRow(ctx, `INSERT INTO crawl.runs (job_name, job, state) VALUES ('claim', '{}', 'running') RETURNING id`).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	s := &events.Sender{Pool: pool, Job: job, Secrets: []string{"s"}}
	if res := s.AtEnd(ctx, runID); res.EventID != 0 || posts.Load() != 0 {
		t.Fatalf("a running run sent event %d", res.EventID)
	}
	end := func() []int64 {
		if _, err := pool.Exec(ctx, `UPDATE crawl.runs SET state = 'done', finished_at = now() WHERE id = $1`, runID); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		ids := make([]int64, 4)
		for i := range ids {
			wg.Go(func() { ids[i] = s.AtEnd(ctx, runID).EventID })
		}
		wg.Wait()
		var sent []int64
		for _, id := range ids {
			if id != 0 {
				sent = append(sent, id)
			}
		}
		return sent
	}
	first := end()
	if len(first) != 1 || posts.Load() != 1 {
		t.Fatalf("4 processes ending the run sent events %v, %d posts; want 1", first, posts.Load())
	}
	// Continued (crawler run --resume sets resumed_at), ended again.
	if _, err := pool.Exec(ctx, `UPDATE crawl.runs SET state = 'running', resumed_at = now() WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	second := end()
	if len(second) != 1 || second[0] == first[0] || posts.Load() != 2 {
		t.Fatalf("the second end sent %v (first %v), %d posts; want a new event", second, first, posts.Load())
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		state  string
		budget bool
		reason string
		failed int64
		want   string
		code   int
	}{
		{"done", false, "", 0, "done", 0},
		{"done", false, "", 3, "done_with_failures", 4},
		{"stopped", true, "credit budget exhausted", 0, "budget_spent", 5},
		{"stopped", false, "interrupted", 0, "interrupted", 3},
		{"stopped", false, "upstream unreachable", 0, "stopped", 3},
		{"failed", false, "boom", 1, "failed", 1},
	} {
		if o, code := events.Outcome(c.state, c.budget, c.reason, c.failed); o != c.want || code != c.code {
			t.Errorf("%+v: %s %d", c, o, code)
		}
	}
}

// An event longer than a NOTIFY takes is sent without its lists, marked
// truncated; one that fits goes whole.
func TestNotifyBodyFits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN fits"); err != nil {
		t.Fatal(err)
	}
	job, err := jobfile.Parse("job.yaml", []byte("name: big\napi: {base_url: https://api.example.com/api}\nseeds: {shortvideo: {profiles: [a]}}\nevents: {notify: fits}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	if err := pool.QueryRow(ctx, `INSERT INTO crawl.runs (job_name, job, state, finished_at) VALUES ('big', '{}', 'done', now()) RETURNING id`).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	// 300 failed tasks of distinct reasons: 20 groups of long examples.
	if _, err := pool.Exec(ctx, `INSERT INTO crawl.tasks (run_id, kind, key, state, outcome, reason)
		SELECT $1, 'shortvideo.profile', 'k' || i, 'failed', 'failed', 'shortvideo/profile:err' || i || ': ' || repeat('x', 500)
		FROM generate_series(1, 300) i`, runID); err != nil {
		t.Fatal(err)
	}
	s := &events.Sender{Pool: pool, Job: job}
	res := s.AtEnd(ctx, runID)
	if res.EventID == 0 || len(res.Deliveries) != 1 || !res.Deliveries[0].Delivered {
		t.Fatalf("%+v", res)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(wctx)
	if err != nil {
		t.Fatal(err)
	}
	var p events.Payload
	if err := json.Unmarshal([]byte(n.Payload), &p); err != nil {
		t.Fatal(err)
	}
	var full string
	if err := pool.QueryRow(ctx, `SELECT payload::text FROM crawl.run_events WHERE id = $1`, res.EventID).Scan(&full); err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || p.Failed.Total != 300 || p.EventID != res.EventID || p.Outcome != "done_with_failures" || len(full) <= events.NotifyMaxBytes ||
		!strings.Contains(full, `"by_reason": [{`) {
		t.Errorf("NOTIFY %d bytes %+v; stored %d bytes", len(n.Payload), p, len(full))
	}
}
