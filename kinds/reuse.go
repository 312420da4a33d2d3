package kinds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
)

// How the kinds declare their reuse across runs (README "Repeat
// harvests"): a kind fetched whole may declare a FreshRule (refresh_after
// skips a task whose entity another run fetched within its window), a list
// returned newest first a SeenFunc (stop_at_seen ends it at a page of
// entries earlier runs stored). The runner and crawler plan apply them.

// FreshRule declares how refresh_after reuses a kind's earlier fetches.
type FreshRule struct {
	// Last finds the latest successful fetch of t's entity by a run other
	// than runID within window; nil: lastDone, the kind's tasks that
	// ended done.
	Last func(ctx context.Context, q db.Querier, t *Task, runID int64, window time.Duration) (Fetch, bool, error)
	// Expand returns the tasks a fetch of t would have created, from the
	// stored data; ok false when the stored data cannot say, and the task
	// is fetched. nil: none.
	Expand func(ctx context.Context, q db.Querier, j Job, t *Task) (children []NewTask, ok bool, err error)
}

// Fetch is a successful fetch by an earlier run.
type Fetch struct {
	RunID int64
	At    time.Time
}

// ReexpandFunc returns the tasks t creates, from the data t's fetch in
// run t.RunID stored, at t's depth (Kind.Reexpand).
type ReexpandFunc func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error)

// SeenFunc counts the entries of a fetched list page that earlier runs
// stored (stop_at_seen), and the page's entries; declared by kinds of
// lists returned newest first.
type SeenFunc func(ctx context.Context, q db.Querier, runID int64, t *Task, res *Result) (seen, total int, err error)

type (
	lastFetchParams struct {
		Kind     string `db:"kind"`
		Key      string `db:"key"`
		RunID    int64  `db:"run_id"`
		WindowUS int64  `db:"window_us"`
	}
	storedProfileParams struct {
		UniqueID string `db:"unique_id"`
	}
	runListParams struct {
		Owner string `db:"owner"`
		RunID int64  `db:"run_id"`
	}
	seenParams struct {
		Owner string   `db:"owner"`
		Keys  []string `db:"keys"`
		RunID int64    `db:"run_id"`
	}
)

var lastFetch = db.Prepare[lastFetchParams]("LastFetch")

var (
	runFollowers = db.Prepare[runListParams]("RunFollowers")
	runFollowing = db.Prepare[runListParams]("RunFollowing")
)

// The statements the kinds' Seen and Fresh rules read.
var (
	storedProfile  = db.Prepare[storedProfileParams]("StoredProfile")
	seenFollowers  = db.Prepare[seenParams]("SeenFollowers")
	seenFollowing  = db.Prepare[seenParams]("SeenFollowing")
	seenComments   = db.Prepare[seenParams]("SeenComments")
	seenSongVideos = db.Prepare[seenParams]("SeenSongVideos")
)

// LastDone is FreshRule.Last's default: the kind's tasks of other runs
// that ended done within window.
func LastDone(ctx context.Context, q db.Querier, t *Task, runID int64, window time.Duration) (Fetch, bool, error) {
	var f Fetch
	err := lastFetch.QueryRow(ctx, q, lastFetchParams{Kind: t.Kind, Key: t.Key, RunID: runID, WindowUS: window.Microseconds()}).Scan(&f.RunID, &f.At)
	if errors.Is(err, pgx.ErrNoRows) {
		return Fetch{}, false, nil
	}
	if err != nil {
		return Fetch{}, false, fmt.Errorf("last fetch of %s %s: %w", t.Kind, t.Key, err)
	}
	return f, true, nil
}

// seenBy returns a SeenFunc counting the distinct keys of a page, read by
// keys, with stmt, the owner of the list being owner(t).
func seenBy(stmt db.Stmt[seenParams], owner func(*Task) string, keys func(*Result) []string) SeenFunc {
	return func(ctx context.Context, q db.Querier, runID int64, t *Task, res *Result) (int, int, error) {
		set := map[string]bool{}
		var distinct []string
		for _, k := range keys(res) {
			if !set[k] {
				set[k] = true
				distinct = append(distinct, k)
			}
		}
		if len(distinct) == 0 {
			return 0, 0, nil
		}
		var n int
		if err := stmt.QueryRow(ctx, q, seenParams{Owner: owner(t), Keys: distinct, RunID: runID}).Scan(&n); err != nil {
			return 0, 0, fmt.Errorf("stop_at_seen: %w", err)
		}
		return n, len(distinct), nil
	}
}
