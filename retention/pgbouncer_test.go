package retention_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/retention"
	"github.com/socialcrawl/crawler/testkit/pgbouncer"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// settingsProbe is a pgx tracer on the prune's connection: whenever the
// prune is between transactions (its connection idle), it reads jit and
// plan_cache_mode through another client connection of the same
// PgBouncer, which with one server connection gets the prune's.
type settingsProbe struct {
	t     *testing.T
	other *pgx.Conn
	seen  []string
}

func (p *settingsProbe) read(ctx context.Context) string {
	var jit, plans string
	if err := p.other.QueryRow(ctx, `SELECT current_setting('jit'), current_setting('plan_cache_mode')`).Scan(&jit, &plans); err != nil {
		p.t.Errorf("probe: %v", err)
	}
	return "jit=" + jit + " plan_cache_mode=" + plans
}

func (p *settingsProbe) TraceQueryStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if conn.PgConn().TxStatus() == 'I' {
		p.seen = append(p.seen, p.read(ctx))
	}
	return ctx
}

func (p *settingsProbe) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A prune through PgBouncer in transaction pooling leaves no setting on
// the server connections other clients get (issue 33.7): its jit and
// plan_cache_mode were set on the session, so they stayed on whichever
// server connection ran the set, between the prune's statements and, when
// the reset landed on another, after it.
func TestPruneThroughPgBouncerLeavesNoSetting(t *testing.T) {
	t.Parallel()
	pool, direct := pgtest.Pool(t)
	for day := range int64(3) {
		harvest(t, pool, "a", day, smallJob)
	}
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	// One server connection: every client of the bouncer gets the one
	// the prune uses.
	b, err := pgbouncer.Start(t.Context(), pgbouncer.Options{Host: u.Hostname(), Port: port, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	through := b.URL(strings.TrimPrefix(u.Path, "/"))
	ctx := context.Background()
	other, err := pgx.Connect(ctx, through)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	probe := &settingsProbe{t: t, other: other}
	defaults := probe.read(ctx)
	cfg, err := pgxpool.ParseConfig(through)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = probe
	bounced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bounced.Close()
	res, err := retention.Prune(ctx, bounced, retention.Options{KeepRuns: 1, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Rows() == 0 {
		t.Fatalf("pruned runs %v, %d rows; want the 2 old runs' rows", res.Runs, res.Rows())
	}
	after := probe.read(ctx)
	if len(probe.seen) < 5 {
		t.Fatalf("the probe looked %d times: want one between each of the prune's transactions", len(probe.seen))
	}
	for i, s := range append(probe.seen, after) {
		if s != defaults {
			t.Errorf("look %d of %d: another client sees %s, want the defaults %s", i+1, len(probe.seen)+1, s, defaults)
			break
		}
	}
}
