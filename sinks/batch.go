package sinks

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Batch is the set of rows one page produced.
type Batch struct {
	SVUsers     []SVUser
	SVSnapshots []SVUserSnapshot
	SVFollows   []SVFollow
}

// Len is the number of rows in the batch.
func (b *Batch) Len() int {
	return len(b.SVUsers) + len(b.SVSnapshots) + len(b.SVFollows)
}

// Write applies b for run runID inside tx, parents before children.
func Write(ctx context.Context, tx pgx.Tx, runID int64, b *Batch) error {
	if err := writeSVUsers(ctx, tx, runID, b.SVUsers); err != nil {
		return fmt.Errorf("write shortvideo.users: %w", err)
	}
	if err := writeSVSnapshots(ctx, tx, runID, b.SVSnapshots); err != nil {
		return fmt.Errorf("write shortvideo.user_snapshots: %w", err)
	}
	if err := writeSVFollows(ctx, tx, runID, b.SVFollows); err != nil {
		return fmt.Errorf("write shortvideo.follows: %w", err)
	}
	return nil
}
