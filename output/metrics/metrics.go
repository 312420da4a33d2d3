// Package metrics exposes a run's figures to Prometheus: served on
// /metrics while the run works (crawler run --metrics-addr) and written at
// its end in the text format for node_exporter's textfile collector
// (--metrics-textfile). Every metric carries the run_id and job labels.
// The metric names are documented in docs/watching.md ("Prometheus").
//
// Counters named *_total count what this process did (several processes
// joining one run each count theirs: sum them); the gauges named
// crawler_run_* are the whole run's figures as read from the database at
// the latest progress sample, the same from every process.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
)

// Metrics is a pipeline.Observer that keeps the figures of one run in its
// own registry (not the global one: nothing else is exported by accident).
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec
	billed      prometheus.Counter
	rateLimited prometheus.Counter
	pauses      *prometheus.CounterVec
	paused      *prometheus.GaugeVec
	pages       prometheus.Counter
	rows        prometheus.Counter
	commit      prometheus.Histogram
	rate        prometheus.Gauge
	inFlight    prometheus.Gauge
	limit       prometheus.Gauge
	moves       *prometheus.CounterVec
	remaining   prometheus.Gauge
	runBilled   prometheus.Gauge
	runReserved prometheus.Gauge
	runMax      prometheus.Gauge
	tasks       *prometheus.GaugeVec

	// wrapped registers with the run's labels: the gauges that are absent
	// until known are registered when first set.
	wrapped       prometheus.Registerer
	remainingOnce sync.Once
	maxOnce       sync.Once

	mu         sync.Mutex
	lastPauses sources.Pauses
	lastMoves  map[concurrency.Move]int64
}

// Outcome classes of crawler_requests_total.
const (
	OutcomeBilled      = "billed"
	OutcomeFree        = "free"
	OutcomeRateLimited = "rate_limited"
	OutcomeClientError = "client_error" // other 4xx
	OutcomeServerError = "server_error" // 5xx and anything else
	OutcomeNotSent     = "not_sent"     // failed before the request was written
)

// CommitBuckets are the page commit latency histogram's buckets, seconds:
// a commit is one round trip of a batch, milliseconds when all is well.
var CommitBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns the metrics of run runID of job, with the crawler's version
// on crawler_build_info.
func New(runID int64, job, version string) *Metrics {
	reg := prometheus.NewRegistry()
	r := prometheus.WrapRegistererWith(prometheus.Labels{"run_id": strconv.FormatInt(runID, 10), "job": job}, reg)
	// auto registers what it makes; remaining and runMax are registered
	// when first set.
	auto := promauto.With(r)
	m := &Metrics{reg: reg}
	build := auto.NewGauge(prometheus.GaugeOpts{Name: "crawler_build_info", Help: "Always 1; the version label is the crawler's version from its build info.",
		ConstLabels: prometheus.Labels{"version": version}})
	build.Set(1)
	m.requests = auto.NewCounterVec(prometheus.CounterOpts{Name: "crawler_requests_total",
		Help: "Requests to the upstream by endpoint and outcome (billed, free, rate_limited, client_error, server_error, not_sent)."}, []string{"endpoint", "outcome"})
	m.billed = auto.NewCounter(prometheus.CounterOpts{Name: "crawler_credits_billed_total", Help: "Credits billed for this process's requests (answers the upstream charges)."})
	m.rateLimited = auto.NewCounter(prometheus.CounterOpts{Name: "crawler_rate_limited_total", Help: "429 answers received."})
	m.pauses = auto.NewCounterVec(prometheus.CounterOpts{Name: "crawler_pause_seconds_total",
		Help: "Seconds every worker was held back, by reason: rate_limit (429 pauses) or outage (upstream unreachable)."}, []string{"reason"})
	for _, reason := range []string{"rate_limit", "outage"} {
		m.pauses.WithLabelValues(reason) // present at 0 from the start
	}
	m.paused = auto.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_paused", Help: "1 while a pause of the reason (rate_limit, outage) is in force."}, []string{"reason"})
	m.pages = auto.NewCounter(prometheus.CounterOpts{Name: "crawler_pages_committed_total", Help: "Pages (or objects) committed to the database."})
	m.rows = auto.NewCounter(prometheus.CounterOpts{Name: "crawler_rows_committed_total", Help: "Rows written to the data tables."})
	m.commit = auto.NewHistogram(prometheus.HistogramOpts{Name: "crawler_page_commit_seconds",
		Help: "Time a worker spends committing one page (rows, discovered tasks and cursor in one transaction): writing it and reading its results, which for a list page come while its next page is fetched; retries included.", Buckets: CommitBuckets})
	m.rate = auto.NewGauge(prometheus.GaugeOpts{Name: "crawler_rate_limit_requests_per_second", Help: "The rate control's current request ceiling (0: none)."})
	m.inFlight = auto.NewGauge(prometheus.GaugeOpts{Name: "crawler_requests_in_flight",
		Help: "Requests holding a slot of the adaptive limit now: sent and not yet answered, or waiting for a rate token or a 429's pause."})
	m.limit = auto.NewGauge(prometheus.GaugeOpts{Name: "crawler_concurrency_limit", Help: "The adaptive limit of requests in flight now."})
	m.moves = auto.NewCounterVec(prometheus.CounterOpts{Name: "crawler_concurrency_moves_total",
		Help: "Moves of the adaptive limit of requests in flight, by reason (start, latency, rate, errors, ceiling) and direction (up, down)."}, []string{"reason", "direction"})
	for _, r := range concurrency.Reasons {
		for _, dir := range []string{"up", "down"} {
			m.moves.WithLabelValues(string(r), dir) // present at 0 from the start
		}
	}
	m.remaining = prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawler_upstream_credits_remaining", Help: "Credits remaining on the key as the upstream last reported them (absent until it does)."})
	m.runBilled = auto.NewGauge(prometheus.GaugeOpts{Name: "crawler_run_credits_billed", Help: "Credits billed to the whole run (all processes), as of the latest sample."})
	m.runReserved = auto.NewGauge(prometheus.GaugeOpts{Name: "crawler_run_credits_reserved", Help: "Credits of the run reserved by requests in flight, as of the latest sample."})
	m.runMax = prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawler_run_credits_max", Help: "The run's credit budget, max_credits (absent: no cap)."})
	m.tasks = auto.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_run_tasks", Help: "Tasks of the whole run by state (pending, leased, done, failed, skipped), as of the latest sample."}, []string{"state"})
	m.wrapped = r
	return m
}

// Registry is the registry holding the run's metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// WriteTextfile writes the metrics to path in the text exposition format,
// atomically (a temporary file in the same directory, then a rename), for
// node_exporter's textfile collector: a scrape never sees half a file.
func (m *Metrics) WriteTextfile(path string) error {
	return prometheus.WriteToTextfile(path, m.reg)
}

// Request implements pipeline.Observer.
func (m *Metrics) Request(o sources.Outcome) {
	m.requests.WithLabelValues(o.Endpoint, outcome(o)).Inc()
	if o.Billed {
		m.billed.Inc()
	}
	if o.Status == http.StatusTooManyRequests {
		m.rateLimited.Inc()
	}
	if o.Credits.Remaining.Valid {
		m.remainingOnce.Do(func() { m.wrapped.MustRegister(m.remaining) })
		m.remaining.Set(float64(o.Credits.Remaining.V))
	}
}

func outcome(o sources.Outcome) string {
	switch {
	case o.NotSent:
		return OutcomeNotSent
	case o.Billed:
		return OutcomeBilled
	case o.Free:
		return OutcomeFree
	case o.Status == http.StatusTooManyRequests:
		return OutcomeRateLimited
	case o.Status >= 400 && o.Status < 500:
		return OutcomeClientError
	}
	return OutcomeServerError
}

// PageCommitted implements pipeline.Observer.
func (m *Metrics) PageCommitted(rows int, took time.Duration) {
	m.pages.Inc()
	m.rows.Add(float64(rows))
	m.commit.Observe(took.Seconds())
}

// Progress implements pipeline.Observer.
func (m *Metrics) Progress(p pipeline.Progress) {
	m.mu.Lock()
	if d := p.Pauses.RateLimited - m.lastPauses.RateLimited; d > 0 {
		m.pauses.WithLabelValues("rate_limit").Add(d.Seconds())
	}
	if d := p.Pauses.Outage - m.lastPauses.Outage; d > 0 {
		m.pauses.WithLabelValues("outage").Add(d.Seconds())
	}
	m.lastPauses = p.Pauses
	for mv, n := range p.Concurrency.Moves {
		if d := n - m.lastMoves[mv]; d > 0 {
			dir := "down"
			if mv.Up {
				dir = "up"
			}
			m.moves.WithLabelValues(string(mv.Reason), dir).Add(float64(d))
		}
	}
	m.lastMoves = p.Concurrency.Moves
	m.mu.Unlock()
	m.inFlight.Set(float64(p.Concurrency.InFlight))
	m.limit.Set(float64(p.Concurrency.Limit))
	m.paused.WithLabelValues("rate_limit").Set(b2f(p.Pauses.RateLimitedNow))
	m.paused.WithLabelValues("outage").Set(b2f(p.Pauses.OutageNow))
	m.rate.Set(p.Rate)
	if p.Run.At.IsZero() {
		return
	}
	m.runBilled.Set(float64(p.Run.CreditsBilled))
	m.runReserved.Set(float64(p.Run.CreditsReserved()))
	if p.Run.MaxCredits != nil {
		m.maxOnce.Do(func() { m.wrapped.MustRegister(m.runMax) })
		m.runMax.Set(float64(*p.Run.MaxCredits))
	}
	for state, n := range map[string]int64{"pending": p.Run.Pending, "leased": p.Run.Leased, "done": p.Run.Done, "failed": p.Run.Failed, "skipped": p.Run.Skipped} {
		m.tasks.WithLabelValues(state).Set(float64(n))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
