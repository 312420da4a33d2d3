package pipeline_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A harvest several tests read is made once (a crawl of the everything job
// takes seconds under -race): each test gets a copy of its database
// (pgtest.Shared, then pgtest.Clone) and reads the sandbox that served it,
// which no one asks anything more.
type sharedHarvest struct {
	once sync.Once
	db   string // the harvest's database (URL), copied for each test
	sum  *pipeline.Summary
	sb   *sandbox.Server
	err  error
}

// everythingHarvest is the everything job with archive on, at world day 0:
// TestEverySeedKindAndEdge reads what it stored and bought,
// TestReplayRebuildsRunFromArchive replays it.
var everythingHarvest sharedHarvest

// everything returns a bundle on a copy of the everything harvest's
// database, with the sandbox that served it, and the harvest's summary.
func everything(t *testing.T) (*bundle, *pipeline.Summary) {
	t.Helper()
	h := &everythingHarvest
	h.once.Do(func() {
		h.db = pgtest.Shared(t)
		h.sb, h.sum, h.err = harvestOnce(h.db, sandbox.Config{PageSize: everythingPage}, "archive: true\n"+fmt.Sprintf(everythingJob, secUID("bare_f7_g3")))
	})
	if h.err != nil {
		t.Fatalf("the shared everything harvest: %v", h.err)
	}
	return &bundle{pool: copyDB(t, h.db), sandbox: h.sb}, h.sum
}

// harvestOnce runs body (a job's sections) on the migrated database of
// URL u against a new sandbox configured by cfg (its keys are set) to its
// end, and returns the sandbox and the run's summary.
func harvestOnce(u string, cfg sandbox.Config, body string) (*sandbox.Server, *pipeline.Summary, error) {
	ctx := context.Background()
	cfg.APIKeys = []string{testKey}
	sb, err := sandbox.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	text := fmt.Sprintf("name: test\napi:\n  base_url: %s/api\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n%s", srv.URL, body)
	job, err := jobfile.Parse("test.yaml", []byte(text))
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	defer pool.Close() // before the copies: a database is copied with no one on it
	b := &bundle{pool: pool, sandbox: sb}
	runID, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		return nil, nil, err
	}
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if err != nil {
		return nil, nil, err
	}
	if sum.State != "done" {
		return nil, nil, fmt.Errorf("state %s: %s", sum.State, sum.Reason)
	}
	return sb, sum, nil
}

// copyDB returns a pool on a new copy of the database of URL src, closed
// and dropped when the test ends.
func copyDB(t *testing.T, src string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgtest.Clone(t, src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // before the drop
	return pool
}
