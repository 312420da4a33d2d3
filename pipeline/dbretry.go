package pipeline

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5/pgconn"
)

// OutageTimeoutDefault is how long workers wait for an unreachable database
// before the run fails.
const OutageTimeoutDefault = 10 * time.Minute

// isConnError reports errors that mean the database went away or is not
// accepting connections yet: the operation may be retried once it is back.
func isConnError(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", // admin_shutdown
			pgErr.Code == "57P02", // crash_shutdown
			pgErr.Code == "57P03": // cannot_connect_now (starting, recovering)
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "connection reset") ||
		strings.Contains(msg, "broken pipe") || strings.Contains(msg, "failed to connect")
}

// retryDB runs op until it succeeds, fails with an error other than a lost
// database connection, ctx ends, or the database stayed away for longer
// than timeout. onWait is told of each wait, for logging.
func retryDB(ctx context.Context, timeout time.Duration, onWait func(error, time.Duration), op func(context.Context) error) error {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 100 * time.Millisecond
	bo.MaxInterval = 5 * time.Second
	bo.MaxElapsedTime = timeout
	bo.Reset()
	for {
		err := op(ctx)
		var perm permanentError
		if errors.As(err, &perm) {
			return perm.error
		}
		if !isConnError(err) || ctx.Err() != nil {
			return err
		}
		wait := bo.NextBackOff()
		if wait == backoff.Stop {
			return err
		}
		if onWait != nil {
			onWait(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
