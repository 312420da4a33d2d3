package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

const sandboxSummary = `Serve the deterministic local stand-in for the upstream API at http://ADDR/api.
See docs/sandbox.md for its world and conventions.

--preset scrapecreators speaks the real service's dialect instead (ScrapeCreators; see
docs/upstream.md): the same world at the real paths, with no /api segment
(http://ADDR/v1/tiktok/..., /v1/instagram/..., /v2/instagram/...), real parameter names,
snake_case shapes, min_time cursors on follow lists, include_replies at 15 credits,
cache_max_age answers at 0 credits, and 403 for items named "blocked..."; a contract
parameter name answers 400.

--churn heavytail gives every account without an r<N> token its own heavy-tailed
rates (about 60% still, 3% fast): followers arrive by daily Poisson draws, some
accounts lose followers, counters drift irregularly. Use it with --world-time N to
serve night N of a benchmark; package sandbox's ChurnTruth is the ground truth.
--churn bursts and --churn drift spread follower rates log-normally (about 40%
still) and add bursts (an account gaining 20-400 a day more for a few days) or a
drift of each account's pace over the weeks (ChurnTruthIn).
--churn content is heavytail whose content changes too (use it with --preset
scrapecreators): creators add videos and posts at the head of their lists, new
comments and replies arrive (most under recent videos), comments are deleted, and
every comment and reply count follows its list (ContentAt, CreatorContentChanges).

Fault injection (all off by default) makes it behave like the real service on a bad day:
a token bucket per API key answering 429, a credit balance per key answering 402, latency,
and seeded 5xx answers, hangs and truncated bodies. The seeded faults are a function of
--seed and the request sequence (the n-th identical request of a key always meets the same
fate), so a failing run can be replayed; the bucket alone runs on the wall clock.
Counters, including rate_limited, errors, truncated, hung and out_of_credits, are at
GET /debug/usage (header x-api-key).`

func cmdSandbox(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "sandbox", "", sandboxSummary)
	preset := fs.String("preset", sandbox.PresetDefault,
		"dialect: contract (docs/upstream.md; paths under /api) or scrapecreators (the real service's paths at the root, parameters and shapes)")
	addr := fs.String("addr", "127.0.0.1:8099", "listen address HOST:PORT (port 0 picks a free one, printed on start)")
	keys := fs.String("api-key", "", "accepted API key(s), comma-separated (default: $SANDBOX_API_KEY)")
	pageSize := fs.Int("page-size", 0, "items per page of cursor lists (0: the sandbox default)")
	worldTime := fs.Int64("world-time", 0, "world clock in days: counters drift with it")
	churn := fs.String("churn", sandbox.ChurnDefault,
		"how accounts change day to day: linear (lists grow by a fixed number a day, counters drift evenly) heavytail (per-account heavy-tailed rates: most accounts still, a few fast; Poisson arrivals, unfollows, irregular counters), bursts or drift (log-normal follower rates with bursts, or drifting), content (heavytail with comments and replies that arrive and are deleted)")
	rate := fs.Float64("rate", 0, "token bucket per API key, in requests per second; a request finding no token answers 429 (0: no limit)")
	burst := fs.Int("burst", 0, "token bucket size per API key (0: one second of requests, ceil(--rate))")
	retryAfter := fs.String("retry-after", sandbox.RetryAfterModeDefault,
		"Retry-After header of a 429: seconds (whole seconds until a token, at least 1), date (an HTTP date), none (no header, like the real service), garbage (an unparsable value)")
	errorRate := fs.Float64("error-rate", 0, "fraction of requests answered 500, 502 or 503 (not billable)")
	truncateRate := fs.Float64("truncate-rate", 0, "fraction of requests whose 200 body is cut in the middle and the connection closed (billable)")
	hangRate := fs.Float64("hang-rate", 0, "fraction of requests held until the client gives up or --hang-max elapses, then 504 (not billable)")
	hangMax := fs.Duration("hang-max", 0, fmt.Sprintf("longest hang (0: %v)", sandbox.HangMaxDefault))
	latency := fs.Duration("latency", 0, "delay of every request past the bucket and the credit check (e.g. 2s; real service: 2-4s)")
	jitter := fs.Duration("latency-jitter", 0, "extra seeded delay, uniform in [0, jitter), added to --latency")
	seed := fs.Int64("seed", 0, "seed of the 5xx, hang, truncation and jitter draws: same seed and requests, same faults")
	credits := fs.Int64("credits", 0, "starting credit balance of each API key; a billable answer spends its cost (one; 15 for comments with replies), an empty balance answers 402 (0: unlimited)")
	realFields := fs.Bool("real-service-fields", false, "contract preset: add credits_charged (and credits_remaining with --credits) to billable bodies, as the real service does")
	newLogger := logFlags(fs)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("sandbox takes no arguments, got %q", fs.Args())
	}
	log, err := newLogger(env.stderr)
	if err != nil {
		return err
	}
	keyList := *keys
	if keyList == "" {
		keyList = env.getenv("SANDBOX_API_KEY")
	}
	if keyList == "" {
		return usagef("--api-key is required (or set SANDBOX_API_KEY)")
	}
	srv, err := sandbox.New(sandbox.Config{
		Preset:            *preset,
		APIKeys:           strings.Split(keyList, ","),
		PageSize:          *pageSize,
		WorldTime:         *worldTime,
		Churn:             *churn,
		Logger:            log,
		Rate:              *rate,
		Burst:             *burst,
		RetryAfterMode:    *retryAfter,
		Credits:           *credits,
		RealServiceFields: *realFields,
		Faults: sandbox.Faults{
			ErrorRate:     *errorRate,
			HangRate:      *hangRate,
			TruncateRate:  *truncateRate,
			HangMax:       *hangMax,
			Latency:       *latency,
			LatencyJitter: *jitter,
			Seed:          *seed,
		},
	})
	if err != nil {
		return usageError{err}
	}
	if *rate > 0 || *credits > 0 || *errorRate > 0 || *truncateRate > 0 || *hangRate > 0 || *latency > 0 || *jitter > 0 {
		log.Info("sandbox faults",
			slog.Float64("rate", *rate), slog.Int("burst", *burst), slog.String("retry_after", *retryAfter),
			slog.Int64("credits", *credits), slog.Float64("error_rate", *errorRate),
			slog.Float64("truncate_rate", *truncateRate), slog.Float64("hang_rate", *hangRate),
			slog.Duration("latency", *latency), slog.Duration("latency_jitter", *jitter), slog.Int64("seed", *seed))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("--addr %s: %v", *addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	base := fmt.Sprintf("http://%s/api", ln.Addr())
	if *preset == sandbox.PresetScrapeCreators {
		base = fmt.Sprintf("http://%s (the scrapecreators dialect)", ln.Addr())
	}
	fmt.Fprintf(env.stdout, "sandbox: serving %s (usage at /debug/usage)\n", base)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		srv.Close() // release requests held by a hang or a latency so Shutdown need not wait for them
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
