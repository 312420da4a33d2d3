package db

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Retry runs op until it succeeds, fails with an error other than a lost
// database connection (Unreachable), ctx ends, or the database stayed
// away for longer than timeout. onWait is told of each wait, for logging.
// op ends the retries at once with backoff.Permanent. The error is always
// op's last one, also when ctx ends during a wait: callers tell a stop by
// ctx, and report what the database said.
func Retry(ctx context.Context, timeout time.Duration, onWait func(error, time.Duration), op func(context.Context) error) error {
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(100*time.Millisecond),
		backoff.WithMaxInterval(5*time.Second),
		backoff.WithMaxElapsedTime(timeout),
	)
	var last error
	_ = backoff.RetryNotify(func() error {
		err := op(ctx)
		if perm := (*backoff.PermanentError)(nil); errors.As(err, &perm) {
			last = perm.Err
			return err
		}
		last = err
		if !Classify(err).Retryable() {
			return backoff.Permanent(err)
		}
		return err
	}, backoff.WithContext(bo, ctx), onWait)
	return last
}

// ConflictBackOff paces the retries of a transaction that lost a deadlock or
// a serialization check: short, jittered pauses so the same transactions do
// not collide again, 5 attempts in all.
func ConflictBackOff(ctx context.Context) backoff.BackOff {
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(20*time.Millisecond),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxInterval(100*time.Millisecond),
		backoff.WithMaxElapsedTime(0),
	)
	return backoff.WithContext(backoff.WithMaxRetries(bo, 4), ctx)
}
