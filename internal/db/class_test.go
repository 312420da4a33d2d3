package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// closedAddr is a local TCP address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// hangUpAddr is a local TCP address that accepts connections and closes
// them at once, as a server dying during the handshake.
func hangUpAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

func connect(t *testing.T, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.WithoutCancel(ctx)) })
	return c
}

func raise(code string) string {
	return fmt.Sprintf(`DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '%s'; END $$`, code)
}

// Every case is an error a real PostgreSQL, a real socket or pgx produced;
// the SQLSTATEs no statement can provoke on demand are raised with that code
// by the server.
func TestClassifyDB(t *testing.T) {
	t.Parallel()
	pool, url := pgtest.Pool(t)
	ctx := t.Context()
	exec := func(sql string) error {
		_, err := pool.Exec(ctx, sql)
		return err
	}
	if err := exec(`CREATE TABLE k (id int PRIMARY KEY, v int); INSERT INTO k VALUES (1, 0), (2, 0)`); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		err  func(t *testing.T) error
		want Class
	}{
		{"no error", func(*testing.T) error { return exec(`SELECT 1`) }, None},

		// The database is away: wait and retry.
		{"connection refused", func(t *testing.T) error {
			_, err := pgx.Connect(ctx, "postgres://postgres@"+closedAddr(t)+"/postgres?sslmode=disable&connect_timeout=5")
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("not ECONNREFUSED: %v", err)
			}
			return err
		}, Unreachable},
		{"server hangs up during the handshake", func(t *testing.T) error {
			_, err := pgx.Connect(ctx, "postgres://postgres@"+hangUpAddr(t)+"/postgres?sslmode=disable&connect_timeout=5")
			return err
		}, Unreachable},
		{"backend terminated (57P01), then the closed connection", func(t *testing.T) error {
			c := connect(t, ctx, url)
			if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, c.PgConn().PID()); err != nil {
				t.Fatal(err)
			}
			first := c.Ping(ctx)
			if got := Classify(first); got != Unreachable {
				t.Errorf("first use after termination: %v: %v", got, first)
			}
			err := c.Ping(ctx)
			if !errors.Is(err, pgconn.ErrConnClosed) {
				t.Errorf("second use: %v, want conn closed", err)
			}
			return err
		}, Unreachable},
		{"statement outlives its context deadline (a hung server)", func(t *testing.T) error {
			sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := connect(t, ctx, url).Exec(sctx, `SELECT pg_sleep(10)`)
			return fmt.Errorf("lease: %w", err)
		}, Unreachable},
		{"connection exception 08006", func(*testing.T) error { return exec(raise("08006")) }, Unreachable},
		{"cannot connect now 57P03", func(*testing.T) error { return exec(raise("57P03")) }, Unreachable},

		// Lost a conflict: retry now.
		{"serialization failure", func(t *testing.T) error {
			tx, err := connect(t, ctx, url).BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `SELECT v FROM k WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
			if err := exec(`UPDATE k SET v = v + 1 WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, `UPDATE k SET v = v + 1 WHERE id = 1`)
			return err
		}, Conflict},
		{"deadlock", func(t *testing.T) error {
			var txs [2]pgx.Tx
			for i := range txs {
				c := connect(t, ctx, url)
				if _, err := c.Exec(ctx, `SET deadlock_timeout = '20ms'`); err != nil {
					t.Fatal(err)
				}
				tx, err := c.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
				if _, err := tx.Exec(ctx, `UPDATE k SET v = v + 1 WHERE id = $1`, i+1); err != nil {
					t.Fatal(err)
				}
				txs[i] = tx
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, tx := range txs {
				wg.Go(func() {
					_, errs[i] = tx.Exec(ctx, `UPDATE k SET v = v + 1 WHERE id = $1`, 2-i)
					if errs[i] != nil {
						tx.Rollback(ctx) // lets the other one through
					}
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		}, Conflict},

		// The data is refused: the task fails.
		{"division by zero", func(*testing.T) error { return exec(`SELECT 1/0`) }, Data},
		{"unique violation", func(*testing.T) error { return exec(`INSERT INTO k VALUES (1, 0)`) }, Data},
		{"undefined table", func(*testing.T) error { return exec(`SELECT * FROM no_such_table`) }, Data},
		{"invalid byte sequence", func(*testing.T) error { return exec(`SELECT convert_from('\xff'::bytea, 'UTF8')`) }, Data},

		// Out of time, not out of bounds: retried.
		{"statement timeout 57014", func(t *testing.T) error {
			c := connect(t, ctx, url)
			if _, err := c.Exec(ctx, `SET statement_timeout = '10ms'`); err != nil {
				t.Fatal(err)
			}
			_, err := c.Exec(ctx, `SELECT pg_sleep(5)`)
			return err
		}, Transient},
		{"lock timeout 55P03", func(*testing.T) error { return exec(raise("55P03")) }, Transient},

		// Neither: the run stops.
		{"statement cancelled by its context", func(t *testing.T) error {
			sctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err := connect(t, ctx, url).Exec(sctx, `SELECT pg_sleep(10)`)
			return err
		}, Fatal},
		{"insufficient resources 53100", func(*testing.T) error { return exec(raise("53100")) }, Fatal},
		// No free slot (a role's connection limit gives the same 53300 as
		// max_connections): not an outage to wait out.
		{"too many connections 53300 while connecting", func(t *testing.T) error {
			role := fmt.Sprintf("noslot_%d", time.Now().UnixNano())
			if err := exec(`CREATE ROLE ` + role + ` LOGIN CONNECTION LIMIT 0`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = exec(`DROP ROLE ` + role) })
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			cfg.User = role
			_, err = pgx.ConnectConfig(ctx, cfg)
			if !TooManyConnections(err) {
				t.Errorf("not 53300: %v", err)
			}
			return err
		}, Fatal},
		{"internal error XX000", func(*testing.T) error { return exec(raise("XX000")) }, Fatal},
		{"commit not advanced " + NotAdvancedCode, func(*testing.T) error { return exec(raise(NotAdvancedCode)) }, Fatal},
		{"not the database's", func(*testing.T) error { return errors.New("handler bug") }, Fatal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if got := Classify(err); got != tc.want {
				t.Fatalf("Classify = %v, want %v; err %T: %v", got, tc.want, err, err)
			}
			// Wrapping, and backoff.Permanent, keep the class.
			if got := Classify(backoff.Permanent(fmt.Errorf("wrapped: %w", err))); err != nil && got != tc.want {
				t.Errorf("wrapped: Classify = %v, want %v", got, tc.want)
			}
		})
	}
}

// Retry waits (logging each wait) while the database is unreachable and
// returns the database's error, not the context's, when the wait is cut; a
// permanent or non-connection error ends it at once.
func TestRetryDB(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := "postgres://postgres@" + closedAddr(t) + "/postgres?sslmode=disable&connect_timeout=5"
	refused := func(ctx context.Context) error {
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			c.Close(ctx)
		}
		return err
	}

	t.Run("waits while unreachable, until the context ends", func(t *testing.T) {
		t.Parallel()
		cctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
		defer cancel()
		calls, waits := 0, 0
		err := Retry(cctx, time.Minute, func(err error, d time.Duration) {
			if waits++; waits == 1 && (d < 50*time.Millisecond || d > 150*time.Millisecond) {
				t.Errorf("first wait %s, want 100ms±50%%", d)
			}
		}, func(ctx context.Context) error { calls++; return refused(ctx) })
		if !errors.As(err, new(*pgconn.ConnectError)) {
			t.Fatalf("err = %v, want the refused connection", err)
		}
		if calls < 2 || waits != calls-1 && waits != calls {
			t.Errorf("calls %d, waits %d", calls, waits)
		}
	})
	t.Run("outage timeout", func(t *testing.T) {
		t.Parallel()
		calls := 0
		err := Retry(ctx, 300*time.Millisecond, nil, func(ctx context.Context) error { calls++; return refused(ctx) })
		if !errors.As(err, new(*pgconn.ConnectError)) || calls < 2 {
			t.Fatalf("err = %v after %d calls, want the refused connection after a few", err, calls)
		}
	})
	for name, op := range map[string]func(context.Context) error{
		"permanent":      func(ctx context.Context) error { return backoff.Permanent(fmt.Errorf("x: %w", refused(ctx))) },
		"not connection": func(context.Context) error { return errors.New("lease lost") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := Retry(ctx, time.Minute, func(error, time.Duration) { t.Error("waited") },
				func(ctx context.Context) error { calls++; return op(ctx) })
			if calls != 1 || err == nil || errors.As(err, new(*backoff.PermanentError)) {
				t.Errorf("calls %d, err %T %v", calls, err, err)
			}
		})
	}
}
