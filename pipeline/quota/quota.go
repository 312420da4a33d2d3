package quota

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/loop"
	"github.com/socialcrawl/crawler/sources"
)

// Timing of the shared quota.
const (
	// quotaBeat is how often a process renews its heartbeat and reads the
	// shared estimate.
	quotaBeat = time.Second
	// quotaDead is how old a heartbeat may be before its process no longer
	// counts: a process killed is absorbed within quotaDead + quotaBeat.
	quotaDead = 3 * time.Second
)

type (
	rateSyncParams struct {
		RunID      int64   `db:"run_id"`
		Owner      string  `db:"owner"`
		Statements int64   `db:"statements"`
		Weight     int     `db:"weight"`
		Announce   bool    `db:"announce"`
		DeadS      float64 `db:"dead_s"`
		Publish    bool    `db:"publish"`
		Rate       float64 `db:"rate"`
		Burst      float64 `db:"burst"`
		Measured   bool    `db:"measured"`
		ProbeInS   float64 `db:"probe_in_s"`
		HoldS      float64 `db:"hold_s"`
	}
	rateLeaveParams struct {
		RunID      int64  `db:"run_id"`
		Owner      string `db:"owner"`
		Statements int64  `db:"statements"`
	}
	ratePauseParams struct {
		RunID   int64   `db:"run_id"`
		Owner   string  `db:"owner"`
		PauseS  float64 `db:"pause_s"`
		Payload string  `db:"payload"`
	}
	noParams struct{}
)

// Client is the client whose rate control shares the quota
// (*sources.Client).
type Client interface {
	SetQuotaSharer(sources.QuotaSharer)
	// PauseShared pauses the client's requests for another process's 429.
	PauseShared(time.Duration)
}

// quotaShare is this process's side of the shared quota.
type quotaShare struct {
	pool   *pgxpool.Pool
	runID  int64
	owner  string
	client Client
	log    *slog.Logger
	// weight is how many tasks this process's workers hold: its share of
	// the quota is its part of the live processes' total.
	weight     func() int
	lastWeight int // as of the last heartbeat

	mu      sync.Mutex
	view    sources.SharedQuota
	pending *rateSyncParams // a publication not yet written

	kick   chan struct{}      // sync now
	pauses chan time.Duration // pauses to announce
	// statements counts the statements sent for sharing.
	statements atomic.Int64
}

var rateLeave = db.Prepare[rateLeaveParams]("RateLeave")

// Start joins run runID's shared quota as process owner, whose weight is
// the tasks it holds (one synchronous heartbeat, so the first request
// already knows its share), and starts the background heartbeat, announcer
// and listener; stop leaves it.
func Start(ctx context.Context, pool *pgxpool.Pool, runID int64, owner string, client Client, weight func() int, log *slog.Logger) (stop func()) {
	s := &quotaShare{pool: pool, runID: runID, owner: owner, client: client, log: log, weight: weight,
		kick: make(chan struct{}, 1), pauses: make(chan time.Duration, 1)}
	s.view.Processes, s.view.Share = 1, 1
	if err := s.sync(ctx); err != nil {
		log.Warn("could not join the shared quota; this process runs its own rate control until it can", "err", err)
	}
	client.SetQuotaSharer(s)
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); s.beat(bg) }()
	go func() { defer wg.Done(); s.announce(bg) }()
	go func() { defer wg.Done(); s.listen(bg) }()
	return func() {
		cancel()
		wg.Wait()
		lctx, done := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer done()
		s.statements.Add(1)
		if _, err := rateLeave.Exec(lctx, pool, rateLeaveParams{RunID: runID, Owner: owner, Statements: s.statements.Load()}); err != nil {
			log.Warn("could not leave the shared quota; the others count this process out within seconds", "err", err)
		}
		log.Info("quota sharing", "statements", s.statements.Load())
	}
}

// View implements sources.QuotaSharer.
func (s *quotaShare) View() sources.SharedQuota {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.view
}

// Publish implements sources.QuotaSharer: written by the next heartbeat,
// brought forward.
func (s *quotaShare) Publish(q sources.QuotaEstimate, probeAt time.Time, hold time.Duration) {
	s.mu.Lock()
	s.pending = &rateSyncParams{Publish: true, Rate: q.Rate, Burst: max(q.Burst, 1), Measured: !q.Measured.IsZero(),
		ProbeInS: time.Until(probeAt).Seconds(), HoldS: hold.Seconds()}
	s.mu.Unlock()
	loop.Kick(s.kick)
}

// Paused implements sources.QuotaSharer.
func (s *quotaShare) Paused(d time.Duration) {
	select {
	case s.pauses <- d:
	default: // one is on its way
	}
}

var rateSync = db.Prepare[rateSyncParams]("RateSync")

// sync is one heartbeat.
func (s *quotaShare) sync(ctx context.Context) error {
	s.mu.Lock()
	p := rateSyncParams{}
	if s.pending != nil {
		p = *s.pending
	}
	s.mu.Unlock()
	p.RunID, p.Owner, p.DeadS, p.Weight = s.runID, s.owner, quotaDead.Seconds(), s.weight()
	// A share that changes much changes the others' at once, not at their
	// next heartbeat: two processes sending full shares for a second
	// would empty the upstream's bucket.
	if w := s.lastWeight; (w == 0) != (p.Weight == 0) || 4*abs(p.Weight-w) > max(w, p.Weight) {
		p.Announce = true
	}
	s.lastWeight = p.Weight
	p.Statements = s.statements.Add(1)
	var v sources.SharedQuota
	var probeIn, hold, pausedS float64
	var told, total int
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := rateSync.QueryRow(sctx, s.pool, p).Scan(&v.Processes, &total, &v.Leader, &v.Rate, &v.Burst, &v.Measured, &probeIn, &hold, &v.Version, &told, &pausedS)
	if err != nil {
		return err
	}
	if pausedS > 0 {
		// Another process's 429, should its NOTIFY not have come.
		s.client.PauseShared(time.Duration(pausedS * float64(time.Second)))
	}
	v.ProbeAt = time.Now().Add(time.Duration(probeIn * float64(time.Second)))
	v.Hold = time.Duration(hold * float64(time.Second))
	v.Share = 1
	if total > 0 {
		v.Share = float64(p.Weight) / float64(total)
	}
	if p.Weight == 0 && total > 0 {
		v.Share = 0 // idle while others work: nothing to send
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Publish && s.pending != nil && s.pending.Rate == p.Rate && s.pending.ProbeInS == p.ProbeInS {
		s.pending = nil
	}
	s.view = v
	return nil
}

func (s *quotaShare) beat(ctx context.Context) {
	loop.Every(ctx, quotaBeat, s.kick, func() {
		if err := s.sync(ctx); err != nil && ctx.Err() == nil {
			// The database is away: the last view stands; the heartbeat
			// lapses and the others count this process out meanwhile.
			s.log.Debug("shared quota heartbeat failed", "err", err)
		}
	})
}

var ratePause = db.Prepare[ratePauseParams]("RatePause")

func (s *quotaShare) announce(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-s.pauses:
			s.statements.Add(1)
			payload := fmt.Sprintf("%d %s pause %d", s.runID, s.owner, d.Milliseconds())
			if _, err := ratePause.Exec(ctx, s.pool, ratePauseParams{RunID: s.runID, Owner: s.owner, PauseS: d.Seconds(), Payload: payload}); err != nil && ctx.Err() == nil {
				s.log.Debug("could not announce a pause", "err", err)
			}
		}
	}
}

// listen receives the other processes' pauses and publications on a
// connection of its own, reconnecting while the run lasts.
func (s *quotaShare) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		s.log.Debug("shared quota listener lost its connection", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(quotaBeat):
		}
	}
}

var (
	rateListen   = db.Prepare[noParams]("RateListen")
	rateUnlisten = db.Prepare[noParams]("RateUnlisten")
)

// The connection is one of the pool's (database.max_conns counts it), kept
// while the run lasts and given back unlistened. Through PgBouncer in
// transaction mode nothing arrives on it: the heartbeat (RateSync) brings
// the other processes' pauses instead.
func (s *quotaShare) listenOnce(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if _, err := rateUnlisten.Exec(uctx, conn, noParams{}); err != nil {
			conn.Conn().Close(uctx)
		}
		conn.Release()
	}()
	if _, err := rateListen.Exec(ctx, conn, noParams{}); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.received(n.Payload)
	}
}

// received acts on a notification: "<run_id> <owner> pause <ms>" or
// "<run_id> <owner> sync", ignoring its own and other runs'.
func (s *quotaShare) received(payload string) {
	f := strings.Fields(payload)
	if len(f) < 3 || f[0] != strconv.FormatInt(s.runID, 10) || f[1] == s.owner {
		return
	}
	switch f[2] {
	case "pause":
		if len(f) == 4 {
			if ms, err := strconv.ParseInt(f[3], 10, 64); err == nil && ms > 0 {
				s.client.PauseShared(time.Duration(ms) * time.Millisecond)
			}
		}
	case "sync":
		loop.Kick(s.kick)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
