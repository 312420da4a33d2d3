package faults

import (
	"context"
	"net/http"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
)

// Config of a Layer: the bucket, the credits, the faults and the hooks
// the server shares with it. Values are already defaulted and validated
// (sandbox.Config does both).
type Config struct {
	Rate        float64
	Burst       int
	RetryMode   string // one of the RetryAfter modes
	Credits     int64
	CreditLimit bool
	Faults      Faults
	Now         func() time.Time
	Holding     func() // test hook, may be nil: a request starts waiting out a latency or a hang
}

// Layer is the fault layer of a server: what the upstream does to a
// request besides answering it. Its state (buckets, balances, fault
// sequences) sits behind mutexes.
type Layer struct {
	bucket    *bucketBook
	credits   *creditBook
	faults    *faultBox
	retryMode string
	now       func() time.Time
	holding   func()
	closing   chan struct{} // closed by Close: held requests are released
}

// New is the layer cfg describes.
func New(cfg Config) *Layer {
	return &Layer{
		bucket:    newBucketBook(cfg.Rate, cfg.Burst),
		credits:   newCreditBook(cfg.CreditLimit || cfg.Credits > 0, cfg.Credits),
		faults:    newFaultBox(cfg.Faults),
		retryMode: cfg.RetryMode,
		now:       cfg.Now,
		holding:   cfg.Holding,
		closing:   make(chan struct{}),
	}
}

// SetRate changes the per-key token bucket (already validated).
func (l *Layer) SetRate(rate float64, burst int) { l.bucket.set(rate, burst, l.now()) }

// SetFaults replaces the faults (already validated) and restarts their
// sequences.
func (l *Layer) SetFaults(f Faults) { l.faults.set(f) }

// AddCredits changes apiKey's credit balance by n (the balance stays >=
// 0); no-op when credits are unlimited.
func (l *Layer) AddCredits(apiKey string, n int64) { l.credits.add(apiKey, n) }

// Credits is apiKey's credit balance; limited is false (and left 0) when
// credits are unlimited.
func (l *Layer) Credits(apiKey string) (left int64, limited bool) { return l.credits.get(apiKey) }

// HoldMore takes n more of apiKey's credits, for an answer that costs more
// than the one the layer held: all of them, or none (ok false).
func (l *Layer) HoldMore(apiKey string, n int64) (ok bool, left int64) {
	return l.credits.holdMore(apiKey, n)
}

// Close releases every request held by a hang (503) or waiting out its
// latency (it then proceeds), and makes later ones not wait. Call it once.
func (l *Layer) Close() { close(l.closing) }

// Wrap is the fault layer around next, between authorization and the
// route. In order:
//
//  1. the key's token bucket: no token -> 429 with Retry-After;
//  2. the key's credit balance: 0 -> 402; else a credit is held until the
//     status is written and given back unless the answer is billable;
//  3. the draw (faultBox.draw): script entry or seeded outcome, and delay;
//  4. the delay (Latency + jitter); a client giving up here gets nothing;
//  5. the outcome: an error status, a hang, or the endpoint (its 200 body
//     cut when truncated).
//
// Requests rejected in 1 or 2 are answered at once, without latency, and
// take no place in the script or the attempt numbers, so the seeded faults
// do not depend on the bucket's timing.
func (l *Layer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := api.ExchangeOf(r)
		if ok, wait := l.bucket.take(ex.Key, l.now()); !ok {
			l.writeRateLimited(rw, ex, wait)
			return
		}
		ok, limited, left := l.credits.hold(ex.Key)
		if !ok {
			ex.Fault = "out_of_credits"
			api.WriteOutOfCredits(rw)
			return
		}
		if limited {
			ex.CreditsLimited, ex.CreditsLeft = true, left
			sw := &api.StatusWriter{ResponseWriter: rw, OnStatus: func(status int) {
				if !ex.Billable(status) {
					l.credits.release(ex.Key)
				}
			}}
			defer func() {
				if sw.Status == 0 { // nothing was answered
					l.credits.release(ex.Key)
				}
			}()
			rw = sw
		}

		d := l.faults.draw(ex.Key, ex.Path, r.URL.RawQuery)
		if !l.wait(r.Context(), d.delay) {
			if !d.billAbandoned || d.action == actStatus {
				ex.Abandoned = true
				return
			}
			d.action, ex.AbandonedBilled = actNone, true // answered into the void
		}
		switch d.action {
		case actStatus:
			ex.Fault = "error"
			if d.scripted {
				ex.Fault = "script"
			}
			l.writeStatus(rw, ex, d.status)
		case actHang:
			ex.Fault, ex.Hung = "hang", true
			if l.hang(rw, r, ex, d.hangMax) && d.billAbandoned {
				ex.Abandoned, ex.AbandonedBilled = false, true
				next.ServeHTTP(rw, r) // the slow answer still comes, and is billed
			}
		case actTruncate:
			ex.Fault, ex.Truncate = "truncate", true
			next.ServeHTTP(rw, r)
		default:
			next.ServeHTTP(rw, r)
		}
	})
}

// wait sleeps d unless the client gives up first (false) or the server is
// closed (true, at once).
func (l *Layer) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	if l.holding != nil {
		l.holding()
	}
	select {
	case <-t.C:
		return true
	case <-l.closing:
		return true
	case <-ctx.Done():
		return false
	}
}

// hang holds the request until the client gives up (nothing is sent: it
// reports true), limit elapses (504) or the server is closed (503).
func (l *Layer) hang(rw http.ResponseWriter, r *http.Request, ex *api.Exchange, limit time.Duration) bool {
	t := time.NewTimer(limit)
	defer t.Stop()
	if l.holding != nil {
		l.holding()
	}
	select {
	case <-t.C:
		api.WriteError(rw, api.Errorf(http.StatusGatewayTimeout, "injected fault: the upstream did not answer within %v", limit))
	case <-l.closing:
		api.WriteError(rw, api.Errorf(http.StatusServiceUnavailable, "the sandbox is closing"))
	case <-r.Context().Done():
		ex.Abandoned = true
		return true
	}
	return false
}

// writeStatus answers an injected error status.
func (l *Layer) writeStatus(rw http.ResponseWriter, ex *api.Exchange, status int) {
	switch status {
	case http.StatusTooManyRequests:
		l.writeRateLimited(rw, ex, max(time.Second, l.bucket.wait(ex.Key, l.now())))
	case http.StatusPaymentRequired:
		api.WriteOutOfCredits(rw)
	default:
		api.WriteError(rw, api.Errorf(status, "injected fault: the upstream answered %d", status))
	}
}

// writeRateLimited answers 429 announcing wait per the Retry-After mode.
func (l *Layer) writeRateLimited(rw http.ResponseWriter, ex *api.Exchange, wait time.Duration) {
	if ex.Fault == "" {
		ex.Fault = "rate_limited"
	}
	ex.RetryAfter = wait
	setRetryAfter(rw.Header(), l.retryMode, l.now(), wait)
	api.WriteError(rw, api.Errorf(http.StatusTooManyRequests, "too many requests for this API key: retry later"))
}
