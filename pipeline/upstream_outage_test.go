package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/netfault"
)

// outageJob is 1 + 50 + 50 = 101 pages: a profile and its two lists of
// 500 entries, 10 a page (outagePageSize: the pages of 50 of before wrote
// five times the rows to prove the same).
const (
	outageJob      = "limits: {workers: 4, max_pages: 60}\nseeds: {shortvideo: {profiles: [outage_f500_g500]}}\n"
	outagePageSize = 10
	outagePages    = 101
	outageAt       = 40 // the upstream stops listening after this many requests
)

// flakyBundle is a bundle whose sandbox is served by a netfault.Server that
// goes down (connections refused) while answering request number at.
func flakyBundle(t *testing.T, at int64) (*bundle, *netfault.Server) {
	t.Helper()
	pool := testPool(t)
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, PageSize: outagePageSize})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var srv *netfault.Server
	srv, err = netfault.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == at {
			srv.Down() // this request is answered; the next ones are refused
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &bundle{pool: pool, sandbox: sb, baseURL: srv.URL + "/api"}, srv
}

// outageOptions are the run options with probes spaced 100 ms doubling to
// 400 ms, so an outage of a few probes lasts about a second.
func outageOptions(b *bundle, job *jobfile.Job, log slog.Handler) pipeline.Options {
	opts := b.options(job, testKey)
	opts.Client.RetryInitial, opts.Client.RetryMax = sources.Duration(100*time.Millisecond), sources.Duration(400*time.Millisecond)
	opts.Logger = slog.New(log)
	opts.Client.Logger = opts.Logger
	return opts
}

var (
	cleanOutageOnce    sync.Once
	cleanOutageContent string
)

// cleanOutage is the content of an uninterrupted run of outageJob.
func cleanOutage(t *testing.T) string {
	t.Helper()
	cleanOutageOnce.Do(func() {
		b := setupWith(t, sandbox.Config{PageSize: outagePageSize})
		job := b.job(t, outageJob)
		if sum := b.run(t, job); sum.State != "done" {
			t.Fatalf("clean run: %+v", sum)
		}
		if u := b.sandbox.Usage(testKey); u.Billable != outagePages {
			t.Fatalf("clean run billable = %d, want %d", u.Billable, outagePages)
		}
		cleanOutageContent = content(t, b)
	})
	if cleanOutageContent == "" {
		t.Fatal("the clean run failed in another test")
	}
	return cleanOutageContent
}

// content is the harvest as an analyst sees it plus the frontier's
// outcome, without timestamps, lease bookkeeping or insertion-order ids.
func content(t *testing.T, b *bundle) string {
	t.Helper()
	ctx := context.Background()
	var out strings.Builder
	for _, q := range []string{
		`SELECT to_jsonb(u) - 'updated_at' FROM shortvideo.users u`,
		`SELECT to_jsonb(s) - 'captured_at' FROM shortvideo.user_snapshots s`,
		`SELECT to_jsonb(f) FROM shortvideo.follows f`,
		`SELECT jsonb_build_object('kind', kind, 'key', key, 'state', state, 'reason', reason, 'cursor', cursor,
		        'pages', pages, 'items', items, 'depth', depth, 'params', params) FROM crawl.tasks`,
		`SELECT jsonb_build_object('state', state, 'billed', credits_billed, 'committed', credits_committed) FROM crawl.runs`,
	} {
		rows, err := b.pool.Query(ctx, "SELECT x::text FROM ("+q+") AS t(x) ORDER BY 1")
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\n%s\n", q, strings.Join(lines, "\n"))
	}
	return out.String()
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(al), len(bl))
}

// The upstream refuses connections mid-run for a few probes (about a
// second): the workers pause instead of failing their tasks, and when it
// listens again the run completes with the same content as a clean run,
// every page bought exactly once and no task failed.
func TestUpstreamOutageMidRun(t *testing.T) {
	t.Parallel()
	want := cleanOutage(t)
	b, srv := flakyBundle(t, outageAt)
	var closed, reopened, probes atomic.Int64
	var upErr error
	var upOnce sync.Once
	counter := &countingHandler{Handler: slog.NewTextHandler(testWriter{t}, nil), count: map[string]*atomic.Int64{
		"upstream unreachable; all requests paused": &closed,
		"upstream reachable again":                  &reopened,
		"upstream still unreachable":                &probes,
	}, after: func() {
		if probes.Load() >= 4 {
			upOnce.Do(func() { upErr = srv.Up() })
		}
	}}
	job := b.job(t, outageJob)
	runID := b.start(t, job)
	sum, err := pipeline.Run(context.Background(), outageOptions(b, job, counter), job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %v %+v", err, sum)
	}
	upOnce.Do(func() {}) // upErr was set inside the Do that brought it up
	if upErr != nil {
		t.Fatal(upErr)
	}
	if closed.Load() != 1 || reopened.Load() != 1 || probes.Load() < 4 {
		t.Errorf("gate closed %d, reopened %d, failed probes %d; want 1, 1, at least 4", closed.Load(), reopened.Load(), probes.Load())
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE state = 'failed'`); got != 0 {
		t.Errorf("%d tasks failed", got)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != outagePages || u.Requests != outagePages {
		t.Errorf("requests %d, billable %d; want %d each (no page bought twice)", u.Requests, u.Billable, outagePages)
	}
	if got := content(t, b); got != want {
		t.Errorf("content differs from a clean run's: %s", firstDiff(want, got))
	}
}

// An outage longer than api.outage_window stops the run resumable (no
// task failed, none left leased), and once the upstream is back the resume
// completes it with the content of a clean run, no page bought twice.
func TestUpstreamOutagePastWindowStopsResumable(t *testing.T) {
	t.Parallel()
	want := cleanOutage(t)
	b, srv := flakyBundle(t, outageAt)
	job := b.job(t, "  outage_window: 1s\n"+outageJob)
	if w := job.API.OutageWindow; time.Duration(w) != time.Second {
		t.Fatalf("outage_window = %v", w)
	}
	runID := b.start(t, job)
	start := time.Now()
	sum, err := pipeline.Run(context.Background(), outageOptions(b, job, slog.NewTextHandler(testWriter{t}, nil)), job, runID)
	var stop *pipeline.StopError
	if !errors.As(err, &stop) || sources.ClassOf(err) != sources.ClassUnreachable || sum.State != "stopped" {
		t.Fatalf("err = %v, summary %+v; want a resumable stop of class unreachable", err, sum)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the stop took %s", took)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM crawl.tasks WHERE state IN ('failed', 'leased')`: 0,
		`SELECT count(*) FROM crawl.runs WHERE state = 'stopped'`:              1,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if err := srv.Up(); err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Resume(context.Background(), b.pool, runID, job.Name); err != nil {
		t.Fatal(err)
	}
	sum, err = pipeline.Run(context.Background(), b.options(job, testKey), job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("resume: %v %+v", err, sum)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != outagePages || u.Requests != outagePages {
		t.Errorf("requests %d, billable %d; want %d each (no page bought twice)", u.Requests, u.Billable, outagePages)
	}
	if got := content(t, b); got != want {
		t.Errorf("content differs from a clean run's: %s", firstDiff(want, got))
	}
}

// countingHandler counts the records whose message starts with one of its
// keys, then calls after.
type countingHandler struct {
	slog.Handler
	count map[string]*atomic.Int64
	after func()
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	for k, n := range h.count {
		if strings.HasPrefix(r.Message, k) {
			n.Add(1)
		}
	}
	err := h.Handler.Handle(ctx, r)
	h.after()
	return err
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{h.Handler.WithAttrs(as), h.count, h.after}
}

func (h *countingHandler) WithGroup(g string) slog.Handler {
	return &countingHandler{h.Handler.WithGroup(g), h.count, h.after}
}

// A stop (SIGTERM) during an outage: the workers waiting at the closed gate
// give up within the grace period, their tasks are released, not failed.
func TestUpstreamOutageInterrupted(t *testing.T) {
	t.Parallel()
	b, _ := flakyBundle(t, outageAt) // never back
	job := b.job(t, outageJob)
	runID := b.start(t, job)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stopped atomic.Int64 // unix nanoseconds of the cancel
	log := onMessage{slog.NewTextHandler(testWriter{t}, nil), "all requests paused", func() {
		if stopped.CompareAndSwap(0, time.Now().UnixNano()) {
			cancel()
		}
	}}
	opts := outageOptions(b, job, log)
	opts.Grace = 300 * time.Millisecond
	sum, err := pipeline.Run(ctx, opts, job, runID)
	took := time.Since(time.Unix(0, stopped.Load()))
	var stop *pipeline.StopError
	if !errors.As(err, &stop) || sum.State != "stopped" || stopped.Load() == 0 {
		t.Fatalf("err = %v, summary %+v; want an interrupted stop during the outage", err, sum)
	}
	if took > opts.Grace+3*time.Second {
		t.Errorf("the run took %s to stop, grace %s", took, opts.Grace)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE state IN ('failed', 'leased')`); got != 0 {
		t.Errorf("%d tasks failed or still leased", got)
	}
}
