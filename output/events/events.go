// Package events tells of a run's end (docs/events.md): the job's webhooks
// get a signed POST of the event's JSON, retried with back-off, and the
// job's NOTIFY channel the same JSON. The event is claimed once per end of
// a run in crawl.run_events, whichever of the run's processes records the
// end first, and each delivery is recorded in crawl.event_deliveries.
// Nothing here fails or holds up a run beyond events.timeout: a webhook
// that is down is logged, recorded and can be sent again (Replay).
package events

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/jsontext"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/runs"
)

// The event's name, and the headers of a delivery.
const (
	EventRunEnded   = "run.ended"
	HeaderEvent     = "X-Crawler-Event"
	HeaderEventID   = "X-Crawler-Event-Id"
	HeaderTimestamp = "X-Crawler-Timestamp"
	HeaderSignature = "X-Crawler-Signature"
)

// AttemptTimeout bounds one POST (and a third of events.timeout, so a
// webhook that hangs leaves time to try again); the retry's back-off
// starts at RetryInitial and doubles up to RetryMax, all within
// events.timeout.
const (
	AttemptTimeout = 10 * time.Second
	RetryInitial   = 500 * time.Millisecond
	RetryMax       = 5 * time.Second
)

// NotifyMaxBytes is the most a NOTIFY carries (PostgreSQL refuses 8000
// bytes and more): a longer event is sent shortened (Payload.Truncated).
const NotifyMaxBytes = 7999

// Payload is the event's JSON.
type Payload struct {
	Event   string `json:"event"`
	EventID int64  `json:"event_id"`
	// Outcome is how the run ended: done, done_with_failures,
	// budget_spent, interrupted, stopped or failed; ExitCode is crawler
	// run's exit code for it.
	Outcome  string         `json:"outcome"`
	ExitCode int            `json:"exit_code"`
	Run      runs.ReportRun `json:"run"`
	Credits  Credits        `json:"credits"`
	// Changes is the run report's "What changed".
	Changes *runs.Changes `json:"what_changed"`
	Failed  FailedTasks   `json:"failed_tasks"`
	// Truncated: a NOTIFY shortened to fit; the whole event is
	// crawl.run_events.payload of EventID.
	Truncated bool `json:"truncated,omitempty"`
}

// Credits are what the run spent.
type Credits struct {
	Billed int64  `json:"billed"`
	Max    *int64 `json:"max"`
	// Saved: not spent thanks to reuse (crawl.run_ledger).
	Saved int64 `json:"saved"`
	// AccountRemaining: the account's balance as the upstream last said.
	AccountRemaining *int64                 `json:"account_remaining,omitempty"`
	ByEndpoint       []runs.EndpointCredits `json:"by_endpoint"`
}

// FailedTasks are the run's failed tasks, by kind and reason (the first
// two parts of the reason, as crawler status groups them: the most
// frequent 20 groups).
type FailedTasks struct {
	Total    int64          `json:"total"`
	ByReason []FailedReason `json:"by_reason"`
}

// FailedReason is one group of failed tasks.
type FailedReason struct {
	Kind    string   `json:"kind"`
	Reason  string   `json:"reason"`
	Tasks   int64    `json:"tasks"`
	Keys    []string `json:"example_keys"`
	Example string   `json:"example"`
}

// Outcome names how a run ended from what crawl.runs says, with crawler
// run's exit code for it (cmd/crawler: 0, 4, 5, 3, 1).
func Outcome(state string, budgetStop bool, reason string, failed int64) (string, int) {
	switch {
	case state == "done" && failed > 0:
		return "done_with_failures", 4
	case state == "done":
		return "done", 0
	case state == "stopped" && budgetStop:
		return "budget_spent", 5
	case state == "stopped" && reason == "interrupted":
		return "interrupted", 3
	case state == "stopped":
		return "stopped", 3
	}
	return "failed", 1
}

// Sender tells the job's webhooks and channel of its runs' ends.
type Sender struct {
	Pool *pgxpool.Pool
	Job  *jobfile.Job
	// Secrets are the webhooks' signing secrets, in the order of
	// events.webhooks (ReadSecrets).
	Secrets []string
	// APIKey, when known, is taken out of the event should anything in it
	// carry the key (the reasons already have it redacted).
	APIKey string
	Log    *slog.Logger
	// Client sends the POSTs; nil: one that follows no redirect.
	Client *http.Client
	// Now stamps the signatures (nil: time.Now).
	Now func() time.Time
}

// ReadSecrets reads each webhook's secret from getenv; a variable not set
// is an error naming its key.
func ReadSecrets(job *jobfile.Job, getenv func(string) string) ([]string, error) {
	out := make([]string, len(job.Events.Webhooks))
	for i, w := range job.Events.Webhooks {
		if out[i] = getenv(w.SecretEnv); out[i] == "" {
			return nil, fmt.Errorf("events.webhooks[%d].secret_env: environment variable %s is not set: export the webhook's signing secret there", i, w.SecretEnv)
		}
	}
	return out, nil
}

// Delivery is how one target got (or missed) an event.
type Delivery struct {
	Target     string
	Attempts   int
	Delivered  bool
	HTTPStatus int // 0: no answer, or NOTIFY
	Err        string
	Started    time.Time
}

// Result is what sending an event did: EventID 0 when none was sent.
type Result struct {
	EventID    int64
	Outcome    string
	ExitCode   int
	Deliveries []Delivery
	Elapsed    time.Duration
}

var (
	lockRun     = db.Prepare[db.RunArg]("EventLockRun")
	claim       = db.Prepare[claimParams]("EventClaim")
	store       = db.Prepare[storeParams]("EventStore")
	notify      = db.Prepare[notifyParams]("EventNotify")
	latest      = db.Prepare[db.RunArg]("EventLatest")
	replayNew   = db.Prepare[claimParams]("EventReplayNew")
	addDelivery = db.Prepare[deliveryParams]("EventDelivery")
)

type claimParams struct {
	RunID    int64  `db:"run_id"`
	Outcome  string `db:"outcome"`
	ExitCode int    `db:"exit_code"`
}

type storeParams struct {
	EventID int64  `db:"event_id"`
	Payload string `db:"payload"`
}

type notifyParams struct {
	Channel string `db:"channel"`
	Notify  string `db:"notify"`
}

type deliveryParams struct {
	EventID    int64     `db:"event_id"`
	Target     string    `db:"target"`
	Replay     bool      `db:"replay"`
	Attempts   int       `db:"attempts"`
	Delivered  bool      `db:"delivered"`
	HTTPStatus *int      `db:"http_status"`
	Err        *string   `db:"error"`
	Started    time.Time `db:"started_at"`
}

// AtEnd sends run runID's event if the run has ended and its end has no
// event yet (another process of the run may have sent it). It never fails
// the run: what goes wrong is logged and recorded, and the whole of it,
// database work included, ends within events.timeout of the call, also
// when ctx is already cancelled (an interrupted run is told too).
func (s *Sender) AtEnd(ctx context.Context, runID int64) Result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(s.Job.Events.Timeout))
	defer cancel()
	log := s.log().With("run_id", runID)
	var res Result
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var (
			state, reason string
			budgetStop    bool
			failed        int64
		)
		if err := lockRun.QueryRow(ctx, tx, db.RunArg{RunID: runID}).Scan(&state, &budgetStop, &reason, &failed); err != nil {
			return err
		}
		res.Outcome, res.ExitCode = Outcome(state, budgetStop, reason, failed)
		err := claim.QueryRow(ctx, tx, claimParams{runID, res.Outcome, res.ExitCode}).Scan(&res.EventID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // not ended, or its end already told
		}
		return err
	})
	if err != nil {
		log.Warn("run event not sent: the database failed; crawler events replay sends it", "err", err)
		return res
	}
	if res.EventID == 0 {
		log.Debug("no run event: the run has not ended, or another process told its end")
		return res
	}
	res.Deliveries = s.send(ctx, log, runID, res.EventID, res.Outcome, res.ExitCode, nil, false)
	res.Elapsed = time.Since(start)
	return res
}

// Replay sends run runID's latest event again, with the same id and JSON
// (so a receiver drops it if it got it), to every webhook and the channel
// the job names now; a run that ended without an event gets one. It takes
// events.timeout at most.
func (s *Sender) Replay(ctx context.Context, runID int64) (Result, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(s.Job.Events.Timeout))
	defer cancel()
	log := s.log().With("run_id", runID)
	var (
		res     Result
		payload *string
	)
	err := latest.QueryRow(ctx, s.Pool, db.RunArg{RunID: runID}).Scan(&res.EventID, &res.Outcome, &res.ExitCode, &payload)
	if errors.Is(err, pgx.ErrNoRows) {
		var state, reason string
		var budgetStop bool
		var failed int64
		if err := lockRun.QueryRow(ctx, s.Pool, db.RunArg{RunID: runID}).Scan(&state, &budgetStop, &reason, &failed); errors.Is(err, pgx.ErrNoRows) {
			return res, runs.ErrNoRun
		} else if err != nil {
			return res, err
		}
		if state != "done" && state != "stopped" && state != "failed" {
			return res, fmt.Errorf("run %d is %s: it has not ended, so it has no event", runID, state)
		}
		res.Outcome, res.ExitCode = Outcome(state, budgetStop, reason, failed)
		err = replayNew.QueryRow(ctx, s.Pool, claimParams{runID, res.Outcome, res.ExitCode}).Scan(&res.EventID)
	}
	if err != nil {
		return res, err
	}
	var body []byte
	if payload != nil {
		body = []byte(*payload)
	}
	res.Deliveries = s.send(ctx, log, runID, res.EventID, res.Outcome, res.ExitCode, body, true)
	res.Elapsed = time.Since(start)
	return res, nil
}

// send builds the event's JSON unless body has it, stores it, NOTIFYs it
// and POSTs it to every webhook at once, then records the deliveries. The
// deliveries end early enough to leave the recording time within ctx.
func (s *Sender) send(ctx context.Context, log *slog.Logger, runID, eventID int64, outcome string, exitCode int, body []byte, replay bool) []Delivery {
	if body == nil {
		p, err := s.build(ctx, runID, eventID, outcome, exitCode)
		if err != nil {
			log.Warn("run event not sent: could not read the run's figures; crawler events replay sends it", "event_id", eventID, "err", err)
			return nil
		}
		if body, err = json.Marshal(p); err != nil {
			log.Warn("run event not sent", "event_id", eventID, "err", err)
			return nil
		}
		if s.APIKey != "" {
			body = jsontext.Redact(body, s.APIKey)
		}
		if _, err := store.Exec(ctx, s.Pool, storeParams{eventID, string(body)}); err != nil {
			log.Warn("could not store the run event; sending it anyway", "event_id", eventID, "err", err)
		}
	}
	var out []Delivery
	if ch := string(s.Job.Events.Notify); ch != "" {
		out = append(out, s.notify(ctx, ch, body))
	}
	dl, _ := deliveryDeadline(ctx)
	dctx, cancel := context.WithDeadline(ctx, dl)
	defer cancel()
	hooks := make([]Delivery, len(s.Job.Events.Webhooks))
	var wg sync.WaitGroup
	for i := range s.Job.Events.Webhooks {
		wg.Go(func() { hooks[i] = s.post(dctx, i, eventID, body) })
	}
	wg.Wait()
	out = append(out, hooks...)
	for _, d := range out {
		p := deliveryParams{EventID: eventID, Target: d.Target, Replay: replay, Attempts: d.Attempts, Delivered: d.Delivered, Started: d.Started}
		if d.HTTPStatus != 0 {
			p.HTTPStatus = &d.HTTPStatus
		}
		if d.Err != "" {
			p.Err = &d.Err
		}
		if _, err := addDelivery.Exec(ctx, s.Pool, p); err != nil {
			log.Warn("could not record a run event's delivery", "event_id", eventID, "target", d.Target, "err", err)
		}
		if d.Delivered {
			log.Info("run event delivered", "event_id", eventID, "target", d.Target, "attempts", d.Attempts)
		} else {
			log.Warn("run event not delivered; crawler events replay sends it again", "event_id", eventID, "target", d.Target,
				"attempts", d.Attempts, "http_status", d.HTTPStatus, "err", d.Err)
		}
	}
	return out
}

// deliveryDeadline leaves a fifth of what remains of ctx, up to 2s, for
// recording the deliveries.
func deliveryDeadline(ctx context.Context) (time.Time, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(time.Hour), false
	}
	return dl.Add(-min(time.Until(dl)/5, 2*time.Second)), true
}

// build reads the event's figures through the run report's own loader.
func (s *Sender) build(ctx context.Context, runID, eventID int64, outcome string, exitCode int) (*Payload, error) {
	r, err := runs.LoadReportSummary(ctx, s.Pool, runID)
	if err != nil {
		return nil, err
	}
	p := &Payload{Event: EventRunEnded, EventID: eventID, Outcome: outcome, ExitCode: exitCode, Run: r.Run, Changes: r.Changes,
		Credits: Credits{Billed: r.Run.CreditsBilled, Max: r.Run.MaxCredits, Saved: r.Run.CreditsSaved, AccountRemaining: r.Run.CreditsRemaining, ByEndpoint: r.Credits},
		Failed:  FailedTasks{ByReason: []FailedReason{}}}
	for _, k := range r.Kinds {
		p.Failed.Total += k.Failed
	}
	for _, rc := range r.Reasons {
		if rc.State == "failed" {
			p.Failed.ByReason = append(p.Failed.ByReason, FailedReason{Kind: rc.Kind, Reason: rc.Reason, Tasks: rc.N, Keys: rc.Keys, Example: rc.Example})
		}
	}
	return p, nil
}

// notify NOTIFYs the event on channel, shortened to fit when needed.
func (s *Sender) notify(ctx context.Context, channel string, body []byte) Delivery {
	d := Delivery{Target: "notify " + channel, Attempts: 1, Started: time.Now()}
	msg := notifyBody(body)
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		_, err := notify.Exec(ctx, tx, notifyParams{channel, msg})
		return err
	})
	if err != nil {
		d.Err = err.Error()
	} else {
		d.Delivered = true
	}
	return d
}

// notifyBody is body if it fits a NOTIFY, else body without its lists
// (new accounts, follow lists, credits by endpoint, failure groups) and
// marked truncated, else only what names the event.
func notifyBody(body []byte) string {
	if len(body) <= NotifyMaxBytes {
		return string(body)
	}
	var p Payload
	if json.Unmarshal(body, &p) == nil {
		p.Truncated = true
		p.Credits.ByEndpoint = nil
		p.Failed.ByReason = nil
		if p.Changes != nil {
			p.Changes.NewAccountsTop, p.Changes.Lists = nil, nil
		}
		if b, err := json.Marshal(p); err == nil && len(b) <= NotifyMaxBytes {
			return string(b)
		}
	}
	b, _ := json.Marshal(struct {
		Event     string `json:"event"`
		EventID   int64  `json:"event_id"`
		RunID     int64  `json:"run_id"`
		Outcome   string `json:"outcome"`
		ExitCode  int    `json:"exit_code"`
		Truncated bool   `json:"truncated"`
	}{p.Event, p.EventID, p.Run.ID, p.Outcome, p.ExitCode, true})
	return string(b)
}

// Sign is the signature of body sent at unix second ts with secret: the
// hex HMAC-SHA256 of "ts.body", as X-Crawler-Signature carries it after
// "sha256=". The timestamp inside lets a receiver refuse an old delivery
// sent again by someone else.
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// post POSTs body to webhook i, retrying answers that may pass (5xx,
// 408, 425, 429, no answer) with exponential back-off until ctx ends.
func (s *Sender) post(ctx context.Context, i int, eventID int64, body []byte) Delivery {
	w := s.Job.Events.Webhooks[i]
	d := Delivery{Target: w.Target(i), Started: time.Now()}
	client := s.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	attempt := min(AttemptTimeout, time.Duration(s.Job.Events.Timeout)/3)
	op := func() error {
		d.Attempts++
		actx, cancel := context.WithTimeout(ctx, attempt)
		defer cancel()
		req, err := http.NewRequestWithContext(actx, http.MethodPost, w.URL, bytes.NewReader(body))
		if err != nil {
			return backoff.Permanent(err)
		}
		ts := now().Unix()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "socialcrawl-crawler")
		req.Header.Set(HeaderEvent, EventRunEnded)
		req.Header.Set(HeaderEventID, strconv.FormatInt(eventID, 10))
		req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(HeaderSignature, "sha256="+Sign(s.Secrets[i], ts, body))
		resp, err := client.Do(req)
		if err != nil {
			d.HTTPStatus = 0
			return attemptError(ctx, err, w, attempt)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		d.HTTPStatus = resp.StatusCode
		switch c := resp.StatusCode; {
		case c >= 200 && c < 300:
			return nil
		case c >= 500 || c == 408 || c == 425 || c == 429:
			return fmt.Errorf("HTTP %d", c)
		default:
			return backoff.Permanent(fmt.Errorf("HTTP %d (not retried)", c))
		}
	}
	bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(RetryInitial), backoff.WithMaxInterval(RetryMax), backoff.WithMaxElapsedTime(0))
	var last error
	err := backoff.Retry(func() error { last = op(); return last }, backoff.WithContext(bo, ctx))
	if err == nil {
		d.Delivered = true
		return d
	}
	if last == nil {
		last = err
	}
	d.Err = last.Error()
	if ctx.Err() != nil {
		d.Err += " (events.timeout reached)"
	}
	return d
}

// attemptError says why a POST got no answer without the webhook's
// address, whose path or query may be its token.
func attemptError(ctx context.Context, err error, w jobfile.Webhook, attempt time.Duration) error {
	switch {
	case ctx.Err() != nil:
		return errors.New("no answer before events.timeout")
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within %s", attempt)
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		err = ue.Unwrap() // *url.Error names the address
	}
	return errors.New(jsontext.RedactString(err.Error(), w.URL))
}

func (s *Sender) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
