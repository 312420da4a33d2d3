package sources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/sync/semaphore"

	"github.com/socialcrawl/crawler/internal/jsontext"
	"github.com/socialcrawl/crawler/sources/concurrency"
	"github.com/socialcrawl/crawler/sources/ratecontrol"
)

// Platform selects the path prefix of a call.
type Platform int

const (
	ShortVideo Platform = iota
	PhotoSocial
)

// Outcome describes one attempt that got an HTTP response.
type Outcome struct {
	Endpoint string
	Status   int
	Credits  Credits // what the body said, when it said it
	// Billed is whether the attempt cost a credit: a 2xx answer, unless its
	// body says credits_charged 0 or is empty (the documented free case: a
	// private photo-sharing profile). Errors are not billed.
	Billed bool
	// Free marks the documented free 2xx answers.
	Free bool
	// NotSent marks an attempt that failed before its request was written
	// (connection refused, DNS): certainly not billed. Status is 0.
	NotSent bool
	// Keys is the shape of a sampled 2xx body (shape.go), nil when the
	// answer was not sampled.
	Keys []string
	// Cached marks an answer the upstream served from its cache.
	Cached bool
}

// Cost is what the attempt cost in credits: what the body says it charged
// (credits_charged) when it says, else 1 for a billed answer, else 0.
func (o Outcome) Cost() int64 {
	switch {
	case !o.Billed:
		return 0
	case o.Credits.Charged.Valid && o.Credits.Charged.V > 0:
		return o.Credits.Charged.V
	}
	return 1
}

// Client calls the upstream with one API key. It is safe for concurrent use
// and meant to be shared by all workers of a run.
type Client struct {
	cfg     Config
	base    *url.URL
	control *ratecontrol.Controller
	// slots is the adaptive limit of requests in flight: every attempt
	// takes one before anything else and gives it back with its sample.
	slots  *concurrency.Limiter
	bodies *bodyBudget
	gate   *outageGate
	pauses pauseClock // the 429 pauses, for Pauses
	routes map[string]Route
	// drained: an answer said the account has no credits left
	// (credits_remaining 0): calls stop before sending, as after a 402.
	drained atomic.Bool
	shapes  shapeSampler
	// forbidden counts 403s since the last 2xx: one is an item the
	// platform blocked, a long run of them is the key (or a proxy) refused.
	forbidden atomic.Int64
}

// BlockedRunMax is how many 403s in a row, with no 2xx between them, are
// taken as the key refused (ClassAuth, the run stops) rather than that many
// items blocked.
const BlockedRunMax = 25

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base, _ := url.Parse(strings.TrimRight(cfg.baseURL(), "/"))
	bodies := &bodyBudget{sem: semaphore.NewWeighted(cfg.MaxInflightBytes), size: cfg.MaxInflightBytes}
	control := ratecontrol.New(cfg.Rate, cfg.Burst)
	control.SetLogger(cfg.Logger)
	return &Client{cfg: cfg, base: base, routes: cfg.routes(), control: control, bodies: bodies,
		slots: concurrency.New(concurrency.Config{Ceiling: cfg.MaxInFlight, Initial: cfg.InitialInFlight, Rate: control.Steady, Loose: control.Loose}),
		gate:  newOutageGate(time.Duration(cfg.OutageWindow), time.Duration(cfg.RetryInitial), time.Duration(cfg.RetryMax), cfg.Logger)}, nil
}

// RateLimit reports the current adaptive request ceiling (0 = none).
func (c *Client) RateLimit() float64 { return c.control.Current() }

// Limit is how many requests may be in flight now (package concurrency):
// the runner keeps at least as many calls going for the limit to be used.
func (c *Client) Limit() int { return c.slots.Limit() }

// InFlight is how many requests hold a slot now: waiting to be sent (a
// rate token, a 429's pause) or sent and not yet answered and read.
func (c *Client) InFlight() int { return c.slots.InFlight() }

// Concurrency reports the adaptive limit of requests in flight, for
// watching: the limit, the slots held, its moves and why.
func (c *Client) Concurrency() concurrency.Status { return c.slots.Status() }

// fetch performs a GET with retries and hands the body of a 2xx response to
// decode. A body received whole that fails checkShape or decode fails the
// call at once (ClassBadRequest): it was billed and would not decode better
// next time; a body cut short in transit is retried. Errors name the
// endpoint in the spec's terms ("/shortvideo/...") and never carry the key.
//
// Every parameter a method sends is required (an optional one is left
// out), so an empty one is refused here, before any credit is reserved:
// the endpoint's path is written once, in its method's call.
func (c *Client) fetch(ctx context.Context, l Lease, r request, decode func(*answer) error) error {
	for _, name := range slices.Sorted(maps.Keys(r.query)) {
		if v := r.query[name]; len(v) == 0 || v[0] == "" {
			return ParamError(specPrefix(r.platform)+r.path, name, "is empty")
		}
	}
	err := c.fetchRaw(ctx, l, r, decode)
	var e *Error
	if errors.As(err, &e) {
		e.Message = jsontext.RedactString(e.Message, c.cfg.APIKey.Reveal())
	}
	return err
}

func (c *Client) fetchRaw(ctx context.Context, l Lease, r request, decode func(*answer) error) error {
	endpoint := specPrefix(r.platform) + r.path
	route, err := c.routeOf(endpoint)
	if err != nil {
		return err
	}
	if route.Retired != "" {
		return &Error{Endpoint: endpoint, Class: ClassRetired, Message: route.Retired}
	}
	if c.drained.Load() {
		return &Error{Endpoint: endpoint, Class: ClassNoCredits, Message: "the account has no credits left (an answer said credits_remaining 0); nothing more is sent"}
	}
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + route.Path
	u.RawQuery = route.translate(r.query).Encode()
	full := u.String()

	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = time.Duration(c.cfg.RetryInitial)
	bo.MaxInterval = time.Duration(c.cfg.RetryMax)
	bo.MaxElapsedTime = 0
	bo.Reset()

	waits := 0 // 429 pauses sat through; they do not count as retries
	// doubt is a connection-level failure not yet known to be this
	// request's own (it costs a retry) or part of an outage (it is free).
	var doubt *streak
	// limited: the last attempt met a 429, and the next one is its retry
	// (it goes first once the pause is over).
	limited := false
	for attempt, retries := 1, 0; ; attempt++ {
		ans, held, err := c.attempt(ctx, l, endpoint, full, max(r.credits, route.Credits, 1), bo, limited)
		limited = false
		if doubt != nil {
			// Decided now: this attempt either got an answer or failed too.
			if _, own := c.gate.ownFault(doubt); own {
				retries++
			}
			doubt = nil
		}
		if err == nil {
			derr := checkShape(ans.body)
			if derr == nil {
				derr = decode(ans)
			}
			// The decoded values alias the body: it stays counted until
			// the lease lets it go (after its page's commit).
			c.bodies.keep(l, held)
			if derr != nil {
				if e := (*Error)(nil); errors.As(derr, &e) {
					e.Attempts = attempt
					return e // the decoder's own verdict (all nulls: not found)
				}
				return malformed(endpoint, attempt, derr)
			}
			l.Body(endpoint, r.query.Encode(), ans.body)
			return nil
		}
		var e *Error
		if !errors.As(err, &e) {
			return err // context or the lease's refusal: not the upstream's doing
		}
		e.Attempts = attempt
		var wait time.Duration
		switch e.Class {
		case ClassRateLimited:
			if waits++; waits > c.cfg.MaxRateLimitWaits {
				return e
			}
			wait = e.Retry // the shared pause attempt has already set
			limited = true
		case ClassRetry:
			if e.outage {
				continue // the gate holds every worker until the upstream answers
			}
			if e.doubt != nil {
				doubt = e.doubt
			} else {
				retries++
			}
			if retries > c.cfg.MaxRetries {
				return e
			}
			wait = bo.NextBackOff()
		default:
			return e
		}
		c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "upstream retry",
			slog.String("endpoint", endpoint), slog.String("class", e.Class.String()),
			slog.Int("status", e.Status), slog.Int("attempt", attempt), slog.Duration("wait", wait))
		if e.Class == ClassRetry {
			if err := ratecontrol.Sleep(ctx, wait); err != nil {
				return err
			}
			if doubt != nil {
				// Other workers' answers meanwhile may have shown the
				// upstream up: then the failure was this request's own.
				if decided, own := c.gate.ownFault(doubt); decided {
					if doubt = nil; own {
						if retries++; retries > c.cfg.MaxRetries {
							return e
						}
					}
				}
			}
		}
	}
}

// attempt sends one request after waiting for the shared pause and a token.
// A 429 sets the shared pause as soon as its status line is read, before
// anything else (the body, the AfterResponse hook's database round trip),
// so that no other worker sends into the pause; bo supplies the back-off
// when the answer carries no usable Retry-After.
//
// A 2xx body is returned, its envelope parsed, with the bytes of the
// in-flight budget it holds, which the caller hands on (bodyBudget.keep).
//
// after429 marks the retry of a request refused by a 429: it takes the next
// free slot and leaves as soon as the pause is over, ahead of the requests
// waiting for a slot or a token (a 429 refuses a request, it does not send
// its item to the back of the queue).
func (c *Client) attempt(ctx context.Context, l Lease, endpoint, full string, credits int, bo backoff.BackOff, after429 bool) (ans *answer, held int64, err error) {
	// The credits first, before a slot: a call waiting for credits must
	// not hold a slot, which the retry of a request that keeps its
	// reservation (its answer never came) may need to give them back.
	// Reserve returns at once for that retry.
	if err := l.Reserve(ctx, endpoint, credits); err != nil {
		return nil, 0, err
	}
	// Then a slot: the requests in flight, and those waiting for a token
	// or a pause, are at most the adaptive limit. It is given back, with
	// what the attempt says of the upstream, once the answer is read.
	acquire, wait := c.slots.Acquire, c.control.Wait
	if after429 {
		acquire, wait = c.slots.AcquireFirst, c.control.WaitRetry
	}
	release, err := acquire(ctx)
	if err != nil {
		return nil, 0, err
	}
	acquired := time.Now()
	sample := concurrency.Sample{Endpoint: endpoint, Outcome: concurrency.Dropped}
	defer func() { release(sample) }()
	// probe: this attempt is the one request an outage lets through; it
	// must end in answered or failure, or be abandoned.
	var probe uint64
	defer func() {
		if probe != 0 {
			c.gate.abandon(probe)
		}
		if err != nil && held > 0 {
			c.bodies.sem.Release(held)
			held = 0
		}
	}()
	// A call that returns before sending keeps its reservation: its page
	// gives it back when it is done (a retry of a timed-out request may
	// still be billed for it).
	for {
		if probe == 0 {
			p, err := c.gate.wait(ctx, endpoint)
			if err != nil {
				return nil, 0, err
			}
			probe = p
		}
		if err := wait(ctx); err != nil {
			return nil, 0, err
		}
		if !c.control.Paused() && (probe != 0 || !c.gate.isClosed()) {
			break
		}
		// A 429 arrived, or an outage closed the gate, after the wait:
		// wait again like every other worker.
	}
	actx, cancel := context.WithTimeout(ctx, time.Duration(c.cfg.Timeout))
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, full, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: build request: %w", endpoint, err)
	}
	req.Header.Set("x-api-key", c.cfg.APIKey.Reveal())
	req.Header.Set("Accept", "application/json")
	var wrote atomic.Bool
	// The answer time runs from the request written to the first byte of
	// the answer: neither the wait for a connection nor the body's
	// transfer is the upstream's queue.
	var wroteAt, firstByte atomic.Int64
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		// The transport replays a GET on a new connection when a pooled
		// one turns out closed by the server before answering: the
		// replay's fate is the request's, so each connection starts unsent.
		GetConn: func(string) { wrote.Store(false) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			wroteAt.Store(time.Now().UnixNano())
			wrote.Store(true)
		},
		GotFirstResponseByte: func() { firstByte.Store(time.Now().UnixNano()) },
	}))
	sent := time.Now()
	sample.Queued = sent.Sub(acquired)
	resp, err := c.cfg.HTTPClient.Do(req)
	sample.Latency, sample.Outcome = answerTime(sent, wroteAt.Load(), firstByte.Load()), concurrency.Failed
	if resp != nil {
		sample.Outcome = outcomeOf(resp.StatusCode)
	} else if !wrote.Load() || ctx.Err() != nil {
		sample.Outcome = concurrency.Dropped // never sent, or the run stopping
	}
	if err != nil && resp != nil {
		// An HTTP answer that could not be followed (a redirect loop): the
		// upstream is up, and this request is at fault, not billed.
		c.gate.answered()
		resp.Body.Close()
		c.settle(ctx, l, Outcome{Endpoint: endpoint, Status: resp.StatusCode})
		return nil, 0, &Error{Endpoint: endpoint, Status: resp.StatusCode, Class: ClassBadRequest, Message: "redirect not followed: " + scrubURL(err).Error()}
	}
	if err != nil {
		if !wrote.Load() {
			// Never sent, so never billed: give the reservation back.
			c.settle(ctx, l, Outcome{Endpoint: endpoint, NotSent: true})
		}
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		// No HTTP answer at all: the upstream may be down as a whole.
		s, free := c.gate.failure(probe, endpoint, scrubURL(err))
		probe = 0
		e := &Error{Endpoint: endpoint, Class: ClassRetry, Err: scrubURL(err), Message: "transport: " + scrubURL(err).Error(), outage: free}
		if !free {
			e.doubt = s
		}
		return nil, 0, e
	}
	c.gate.answered()
	probe = 0
	defer resp.Body.Close()
	var retry time.Duration
	if resp.StatusCode == http.StatusTooManyRequests {
		if retry = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), time.Duration(c.cfg.RetryAfterCap)); retry <= 0 {
			retry = bo.NextBackOff()
		}
		c.control.Throttled(sent, retry)
		c.pauses.pause(time.Now(), retry)
	} else if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// Admitted by the upstream's quota, which counted it when it
		// arrived: stamped with its send time, as a 429 is.
		c.control.SuccessAt(sent)
	}
	ok2xx := resp.StatusCode >= 200 && resp.StatusCode < 300
	var body []byte
	var readErr error
	if ok2xx {
		body, held, readErr = c.bodies.readBody(ctx, l, resp, c.cfg.MaxBodyBytes)
	} else {
		body, readErr = readErrorBody(resp.Body)
	}
	tooLarge := errors.Is(readErr, errBodyTooLarge)
	if tooLarge {
		readErr = nil // received, and billed, but never decoded
	}
	if readErr == nil {
		// Before anything can log, store or print it.
		body = jsontext.Storable(jsontext.Redact(body, c.cfg.APIKey.Reveal()))
	}
	out := Outcome{Endpoint: endpoint, Status: resp.StatusCode}
	var badCharge int64
	if readErr == nil && !tooLarge {
		// The one parse of the envelope: for the credits, and for decoding.
		ans = newAnswer(body)
		if ans.err == nil {
			out.Credits = ans.env.credits()
			if c := out.Credits.Charged; c.Valid && (c.V < 0 || c.V > MaxRequestCredits) {
				// Not a credible charge (2^62 would overflow every sum): billed
				// as 1, and the answer refused as bad data for its task.
				out.Credits.Charged, badCharge = Int64{}, c.V
			}
			if ok2xx {
				out.Cached = ans.env.cached()
				if c.shapes.take(endpoint) {
					out.Keys = ans.env.keyPaths()
				}
			}
		}
	}
	if ok2xx && out.Credits.Remaining.Valid && out.Credits.Remaining.V <= 0 {
		c.drained.Store(true) // this answer is kept; the next call would be refused
	}
	if ok2xx {
		out.Free = readErr == nil && !tooLarge && ans.free(out.Credits.Charged, badCharge != 0)
		out.Billed = !out.Free
	}
	c.settle(ctx, l, out)
	if readErr != nil {
		if ctx.Err() != nil {
			return nil, held, ctx.Err()
		}
		return nil, held, &Error{Endpoint: endpoint, Status: resp.StatusCode, Class: ClassRetry, Message: "truncated body: " + scrubURL(readErr).Error()}
	}
	if tooLarge {
		return nil, held, &Error{Endpoint: endpoint, Status: resp.StatusCode, Class: ClassBadRequest, Message: fmt.Sprintf("body larger than %d bytes", c.cfg.MaxBodyBytes)}
	}
	if ok2xx {
		c.forbidden.Store(0)
	}
	if badCharge != 0 {
		return nil, held, &Error{Endpoint: endpoint, Status: resp.StatusCode, Class: ClassBadRequest,
			Message: fmt.Sprintf("credits_charged %d is not a credible charge (0 to %d): answer refused, billed as 1", badCharge, MaxRequestCredits)}
	}
	if class := classify(resp.StatusCode, body); class != 0 {
		e := &Error{Endpoint: endpoint, Status: resp.StatusCode, Class: class, Message: upstreamMessage(body)}
		if class == ClassBlocked && c.forbidden.Add(1) >= BlockedRunMax {
			e.Class = ClassAuth
			e.Message = fmt.Sprintf("%d answers in a row were 403, none a success: taken as the key refused rather than every item blocked (%s)", BlockedRunMax, e.Message)
		}
		e.Retry = retry
		return nil, held, e
	}
	return ans, held, nil
}

// answerTime is the time from the request written (wroteNs, or sent when
// the trace saw none) to the first byte of the answer (firstNs, or now:
// a timeout or a lost connection).
func answerTime(sent time.Time, wroteNs, firstNs int64) time.Duration {
	from, to := sent, time.Now()
	if wroteNs != 0 {
		from = time.Unix(0, wroteNs)
	}
	if firstNs != 0 {
		to = time.Unix(0, firstNs)
	}
	return max(to.Sub(from), 0)
}

// outcomeOf is what an answer's status says to the concurrency control: a
// 429 is the rate control's, a 5xx the upstream failing, any other the
// answer time to read.
func outcomeOf(status int) concurrency.Outcome {
	switch {
	case status == http.StatusTooManyRequests:
		return concurrency.Throttled
	case status >= 500:
		return concurrency.Failed
	}
	return concurrency.OK
}

// settle tells the lease, then the process-wide observer, an attempt's
// outcome.
func (c *Client) settle(ctx context.Context, l Lease, o Outcome) {
	l.Settle(ctx, o)
	if c.cfg.AfterResponse != nil {
		c.cfg.AfterResponse(ctx, o)
	}
}

// malformed is the error of a 2xx body received whole that failed
// checkShape or its decoding: billed, and it would not decode better next
// time.
func malformed(endpoint string, attempts int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "malformed body: ")
	return &Error{Endpoint: endpoint, Class: ClassBadRequest, Status: 200, Attempts: attempts, Message: "malformed body: " + Truncate(msg, 300), Err: err}
}

// isEmptyBody reports an empty response: no bytes, null, or {}.
func isEmptyBody(body []byte) bool {
	switch strings.TrimSpace(string(body)) {
	case "", "null", "{}":
		return true
	}
	return false
}

// specPrefix is the platform prefix used in error messages and metrics,
// independent of the configured path prefix.
func specPrefix(p Platform) string {
	if p == PhotoSocial {
		return "/photosocial"
	}
	return "/shortvideo"
}

// scrubURL drops the URL from a *url.Error: query strings carry user input
// that may be long, and the message should name the endpoint instead.
func scrubURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
