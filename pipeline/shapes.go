package pipeline

import (
	"context"
	"sync"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/sources"
)

// shapeBook gathers the shapes the client sampled from this process's
// answers (sources/shape.go) until the next progress sample records them
// in crawl.response_keys, where status and report compare them with the
// job's previous run. Diagnostics: a crash loses at most one interval.
type shapeBook struct {
	mu     sync.Mutex
	counts map[shapeKey]int64
}

// shapeKey is a key path of an endpoint's answers; key "" counts the
// sampled answers themselves.
type shapeKey struct{ endpoint, key string }

func (b *shapeBook) add(o sources.Outcome) {
	if o.Keys == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counts == nil {
		b.counts = map[shapeKey]int64{}
	}
	b.counts[shapeKey{o.Endpoint, ""}]++
	for _, k := range o.Keys {
		b.counts[shapeKey{o.Endpoint, k}]++
	}
}

type recordShapesParams struct {
	RunID     int64    `db:"run_id"`
	Endpoints []string `db:"endpoints"`
	Keys      []string `db:"keys"`
	Counts    []int64  `db:"counts"`
}

var recordShapes = db.Prepare[recordShapesParams]("RecordShapes")

// flush records what was gathered; on failure it keeps it for the next.
func (b *shapeBook) flush(ctx context.Context, c *crawl) error {
	b.mu.Lock()
	counts := b.counts
	b.counts = nil
	b.mu.Unlock()
	if len(counts) == 0 {
		return nil
	}
	arg := recordShapesParams{RunID: c.runID}
	for k, n := range counts {
		arg.Endpoints = append(arg.Endpoints, k.endpoint)
		arg.Keys = append(arg.Keys, k.key)
		arg.Counts = append(arg.Counts, n)
	}
	if _, err := recordShapes.Exec(ctx, c.opts.Pool, arg); err != nil {
		b.mu.Lock()
		if b.counts == nil {
			b.counts = map[shapeKey]int64{}
		}
		for k, n := range counts {
			b.counts[k] += n
		}
		b.mu.Unlock()
		return err
	}
	return nil
}
