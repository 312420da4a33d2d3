package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/socialcrawl/crawler/internal/db"
)

// ErrNoRun means the run asked for does not exist.
var ErrNoRun = errors.New("no such run")

// ErrPruned means the run asked for was pruned (crawler prune): its tasks
// are gone, so it cannot be worked on again.
var ErrPruned = errors.New("run was pruned")

// zdec decodes archived bodies (the runner writes them with zstd);
// DecodeAll is safe for concurrent use.
var zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(64<<20))

// unarchive decompresses an archived body.
func unarchive(body []byte) ([]byte, error) {
	out, err := zdec.DecodeAll(body, nil)
	if err != nil {
		return nil, fmt.Errorf("archived body: %w", err)
	}
	return out, nil
}

// Savings are the credits reuse saved a run (crawl.run_ledger).
type Savings struct {
	Saved            int64 // FreshSaved + CreditsNotWalked
	FetchesSkipped   int64 // tasks skipped as fresh
	FreshSaved       int64 // their credits (1 per object)
	ListsStopped     int64 // lists stop_at_seen ended
	CreditsNotWalked int64 // the credits of their pages not walked (each at its page's price), estimated from each list's last full walk
}

var runSavings = db.Prepare[db.RunArg]("RunSavings")

// LoadSavings reads what reuse saved run runID.
func LoadSavings(ctx context.Context, conn db.Querier, runID int64) (Savings, error) {
	var s Savings
	if err := runSavings.QueryRow(ctx, conn, db.RunArg{RunID: runID}).Scan(&s.Saved, &s.FetchesSkipped, &s.FreshSaved, &s.ListsStopped, &s.CreditsNotWalked); err != nil {
		return s, fmt.Errorf("savings of run %d: %w", runID, err)
	}
	return s, nil
}
