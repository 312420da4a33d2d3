package pipeline_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// onMessage is a slog handler that calls f for every record whose message
// contains substr.
type onMessage struct {
	slog.Handler
	substr string
	f      func()
}

func (h onMessage) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.substr) {
		h.f()
	}
	return h.Handler.Handle(ctx, r)
}
func (h onMessage) WithAttrs(as []slog.Attr) slog.Handler {
	return onMessage{h.Handler.WithAttrs(as), h.substr, h.f}
}
func (h onMessage) WithGroup(g string) slog.Handler {
	return onMessage{h.Handler.WithGroup(g), h.substr, h.f}
}

// PostgreSQL stopped (-m immediate) mid-run and started again: the workers
// wait, the run completes, nothing is lost and no page is bought twice.
func TestPostgresOutageMidRun(t *testing.T) {
	t.Parallel()
	cluster := pgtest.OwnCluster(t)
	ctx := context.Background()
	migrateChild(t, cluster.URL())
	pool, err := pgxpool.New(ctx, cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var stopOnce, restartOnce sync.Once
	var noticed atomic.Bool
	restarted := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 6 {
			stopOnce.Do(func() {
				if err := cluster.StopImmediate(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	b := &bundle{pool: pool, sandbox: sb, baseURL: srv.URL + "/api"}
	job := b.job(t, "limits: {workers: 3}\nseeds: {shortvideo: {profiles: [out_f300_g40, age_f60_g60]}}\n")
	runID, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		t.Fatal(err)
	}
	opts := b.options(job, testKey)
	opts.Logger = slog.New(onMessage{slog.NewTextHandler(testWriter{t}, nil), "database unreachable", func() {
		restartOnce.Do(func() {
			noticed.Store(true)
			go func() { restarted <- cluster.Restart(context.Background()) }()
		})
	}})
	sum, err := pipeline.Run(ctx, opts, job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %v %+v", err, sum)
	}
	if !noticed.Load() {
		t.Fatal("the outage was never noticed")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	// 1 + 6 + 1 and 1 + 2 + 2 pages.
	if u := sb.Usage(testKey); u.Billable != 13 {
		t.Errorf("billable = %d, want 13", u.Billable)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM shortvideo.follows`:                460,
		`SELECT count(*) FROM shortvideo.users`:                  462,
		`SELECT count(*) FROM crawl.tasks WHERE state <> 'done'`: 0,
		`SELECT sum(pages) FROM crawl.tasks`:                     13,
		`SELECT count(*) FROM crawl.runs WHERE state = 'done'`:   1,
		`SELECT credits_billed FROM crawl.runs`:                  13,
		// Both ends of every edge are accounts (the writer keeps it; no
		// foreign key since migration 00015).
		`SELECT count(*) FROM shortvideo.follows f WHERE NOT EXISTS (SELECT 1 FROM shortvideo.users u WHERE u.unique_id = f.follower)
		   OR NOT EXISTS (SELECT 1 FROM shortvideo.users u WHERE u.unique_id = f.followee)`: 0,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
