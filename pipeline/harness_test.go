package pipeline_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

const testKey = "sk-pipeline-test-91b2"

// bundle is one test's world: a migrated database and a sandbox over HTTP.
type bundle struct {
	pool    *pgxpool.Pool
	sandbox *sandbox.Server
	srv     *httptest.Server
	baseURL string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	return setupWith(t, sandbox.Config{})
}

// setupWith is setup with a sandbox configured by cfg (its keys are set).
func setupWith(t *testing.T, cfg sandbox.Config) *bundle {
	t.Helper()
	return setupRecycled(t, pkgDBs, cfg)
}

// setupFresh is setupWith on a new clone of its own, for a test that
// changes what a recycled database must not carry (a trigger).
func setupFresh(t *testing.T, cfg sandbox.Config) *bundle {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	return setupOn(t, pool, cfg)
}

// setupOn is setupWith on the database of pool.
func setupOn(t *testing.T, pool *pgxpool.Pool, cfg sandbox.Config) *bundle {
	t.Helper()
	cfg.APIKeys = []string{testKey}
	sb, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL + "/api"}
}

// job parses a job file whose api section points at the sandbox; body holds
// the other sections.
func (b *bundle) job(t *testing.T, body string) *jobfile.Job {
	t.Helper()
	text := fmt.Sprintf("name: test\napi:\n  base_url: %s\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n%s", b.baseURL, body)
	job, err := jobfile.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("job: %v\n%s", err, text)
	}
	return job
}

// run starts a new run of job and works it to the end.
func (b *bundle) run(t *testing.T, job *jobfile.Job) *pipeline.Summary {
	t.Helper()
	ctx := context.Background()
	runID := b.start(t, job)
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}

// start records a new run of job and returns its id.
func (b *bundle) start(t *testing.T, job *jobfile.Job) int64 {
	t.Helper()
	runID, err := pipeline.Start(context.Background(), b.pool, job)
	if err != nil {
		t.Fatal(err)
	}
	return runID
}

// options are the run options of a test: the job's client config with key
// and tiny retry back-offs.
func (b *bundle) options(job *jobfile.Job, key string) pipeline.Options {
	cfg := job.ClientConfig(sources.Secret(key), nil)
	cfg.RetryInitial, cfg.RetryMax = sources.Duration(time.Millisecond), sources.Duration(5*time.Millisecond)
	return pipeline.Options{Pool: b.pool, Client: cfg, PollInterval: 20 * time.Millisecond}
}

func (b *bundle) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := b.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// tasks returns "kind key state reason pages" lines of a run's tasks.
func (b *bundle) tasks(t *testing.T, runID int64) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT kind, key, state, coalesce(reason, ''), pages FROM crawl.tasks WHERE run_id = $1 ORDER BY id`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, key, state, reason string
		var pages int
		if err := rows.Scan(&kind, &key, &state, &reason, &pages); err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(reason, ":"); i > 0 {
			reason = reason[:i]
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %d", kind, key, state, reason, pages))
	}
	return out
}
