package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Config configures a benchmark session. The zero value runs every workload
// but the testing.B benchmarks, at full size, on a throwaway PostgreSQL
// cluster.
type Config struct {
	// Smoke runs every workload for a second or two with small sizes: the
	// figures are computed but say little.
	Smoke bool
	// Only names the workloads to run (see Workloads); empty: all.
	Only []string
	// DatabaseURL is the PostgreSQL server to create the workloads'
	// databases on (the role needs CREATEDB). Empty: a throwaway cluster.
	DatabaseURL string
	// GoBench runs the testing.B benchmarks of the hot paths too (go test
	// -bench), with BenchTime (default "2s"). Ignored in smoke mode.
	GoBench   bool
	BenchTime string
	// CrawlerBin is a built crawler binary; empty: go build ./cmd/crawler
	// from ModuleDir (default: the module above the working directory).
	CrawlerBin string
	ModuleDir  string
	// Command is how this session was started, shown in the report.
	Command string
	Logger  *slog.Logger
}

// sizes are the knobs a workload is run with; smoke mode shrinks them.
type sizes struct {
	quotaT, quotaEqualT time.Duration // workload 1, ceiling above R and == R
	changePhase         time.Duration // workload 2, each of the three rates
	latencyT            time.Duration // workload 3
	latencyWorkers      int
	ceilingT            time.Duration // workload 4, end to end
	copyPages           int           // workload 4, pages of 50 followers written and copied
	memFollowers        []int         // workload 5 checkpoints; the last is the account's size
	wasteKills          int           // workload 6
	wasteSeeds          []string
	scaleT              time.Duration   // workload 7, per process count
	outages             []time.Duration // workload 9
	autoQuotaT          time.Duration   // workload 11, each form of Retry-After
	autoScaleT          time.Duration   // workload 14, per process count: as long as workload 11, so the start weighs as much
	concCases           []concCase      // workload 17, the client-driven cases
	issueAccounts       int             // workload 17, the issue's job end to end
	issueFollowers      int
	issueLatency        time.Duration
	issueT              time.Duration
	knee                kneeSizes     // workloads 18 and 19
	scrapyT             time.Duration // workload 20, each run
	inflightLists       int           // workload 21
	inflightLatency     time.Duration
	inflightT           time.Duration // each of its two runs
	issueLong           issueJobSize  // workload 17, the issue's job at ten minutes' work
}

// issueJobSize sizes a job of the issue's lists: accounts of followers
// each, run for up to t.
type issueJobSize struct {
	accounts, followers int
	t                   time.Duration
}

// kneeSizes size the saturating upstream's workloads.
type kneeSizes struct {
	servers int
	service time.Duration // mean service time
	lists   int
	d, warm time.Duration // workload 18
	phase   time.Duration // workload 19: before, during and after the degradation
}

var fullSizes = sizes{
	quotaT:         180 * time.Second,
	quotaEqualT:    60 * time.Second,
	changePhase:    40 * time.Second,
	latencyT:       20 * time.Second,
	latencyWorkers: 8,
	ceilingT:       20 * time.Second,
	copyPages:      1000,
	memFollowers:   []int{10_000, 100_000, 1_000_000},
	wasteKills:     10,
	wasteSeeds:     []string{"w1_f2000_g400", "w2_f1500_g300", "w3_f1000_g200", "w4_f500_g100", "w5_f240_g35", "w6_f3_g3"},
	scaleT:         20 * time.Second,
	outages:        []time.Duration{15 * time.Second, 2 * time.Minute},
	autoQuotaT:     120 * time.Second,
	autoScaleT:     120 * time.Second,
	concCases: []concCase{
		{latency: 3 * time.Second, rate: 20, d: 150 * time.Second, lists: 400},
		{latency: 3 * time.Second, rate: 100, d: 150 * time.Second, lists: 800},
		{latency: 20 * time.Second, rate: 20, d: 480 * time.Second, lists: 1000},
		{latency: 20 * time.Second, rate: 100, d: 480 * time.Second, lists: 3000},
	},
	issueAccounts:   60,
	issueFollowers:  600,
	issueLatency:    3 * time.Second,
	issueT:          150 * time.Second,
	knee:            kneeSizes{servers: 40, service: 2 * time.Second, lists: 300, d: 180 * time.Second, warm: 60 * time.Second, phase: 60 * time.Second},
	scrapyT:         120 * time.Second,
	inflightLists:   2000,
	inflightLatency: 5 * time.Second,
	inflightT:       90 * time.Second,
	// 200 lists of 60 pages: 12,000 pages, 600 s at 20/s (a list's chain
	// is 180 s at 3 s a page, so the quota binds, not the chains).
	issueLong: issueJobSize{accounts: 200, followers: 3000, t: 15 * time.Minute},
}

var smokeSizes = sizes{
	quotaT:         1500 * time.Millisecond,
	quotaEqualT:    time.Second,
	changePhase:    time.Second,
	latencyT:       1500 * time.Millisecond,
	latencyWorkers: 4,
	ceilingT:       1500 * time.Millisecond,
	copyPages:      20,
	memFollowers:   []int{100, 1_000, 2_000},
	wasteKills:     2,
	wasteSeeds:     []string{"w1_f400_g120", "w2_f100_g50", "w3_f3_g3"},
	scaleT:         time.Second,
	outages:        []time.Duration{time.Second},
	autoQuotaT:     time.Second,
	autoScaleT:     time.Second,
	concCases: []concCase{
		{latency: 150 * time.Millisecond, rate: 20, d: 2 * time.Second, lists: 40},
		{latency: time.Second, rate: 100, d: 3 * time.Second, lists: 200},
	},
	issueAccounts:   4,
	issueFollowers:  100,
	issueLatency:    150 * time.Millisecond,
	issueT:          2 * time.Second,
	knee:            kneeSizes{servers: 8, service: 100 * time.Millisecond, lists: 40, d: 3 * time.Second, warm: time.Second, phase: time.Second},
	scrapyT:         2 * time.Second,
	inflightLists:   40,
	inflightLatency: 200 * time.Millisecond,
	inflightT:       3 * time.Second,
	issueLong:       issueJobSize{accounts: 4, followers: 200, t: 3 * time.Second},
}

// workload is one benchmark of the harness.
type workload struct {
	name  string // for -only
	title string
	run   func(ctx context.Context, e *env) (*outcome, error)
}

// outcome is what a workload measured, and how it was set up.
type outcome struct {
	setup   string
	figures []Figure
}

// workloads in the order they run.
var workloads = []workload{
	{"quota", "1. Quota saturation", runQuota},
	{"ratechange", "2. Rate change mid-run", runRateChange},
	{"latency", "3. Latency hiding", runLatency},
	{"ceiling", "4. Pipeline ceiling", runCeiling},
	{"memory", "5. Memory", runMemory},
	{"waste", "6. Waste", runWaste},
	{"scaleout", "7. Scale-out", runScaleOut},
	{"gobench", "8. Hot paths (testing.B)", runGoBench},
	{"outage", "9. Upstream outage", runOutage},
	{"hostile", "10. Hostile upstream", runHostile},
	{"quotaauto", "11. Quota saturation, api.rate unset", runQuotaAuto},
	{"ratechangeauto", "12. Rate change mid-run, api.rate unset", runRateChangeAuto},
	{"dbcost", "13. Latency hiding at 50 ms, database cost per page", runDBCost},
	{"scaleoutauto", "14. Scale-out, api.rate unset", runScaleOutAuto},
	{"history", "15. Cost flat in history", runHistory},
	{"revisit", "16. Revisit policies at equal budget", runRevisit},
	{"concurrency", "17. Concurrency with no settings at the real service's answer times", runConcurrency},
	{"knee", "18. A saturating upstream: the knee", runKnee},
	{"degrade", "19. An upstream whose knee halves for a while", runDegrade},
	{"scrapy", "20. The peer: Scrapy with its defaults and with AutoThrottle", runScrapy},
	{"inflight", "21. Thousands of requests in flight: memory, CPU, connections", runInflight},
	{"content", "22. Content nights on a changing world at equal budget", runContent},
}

// Workloads names the workloads, in the order Run runs them.
func Workloads() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.name
	}
	return names
}

// Report is the result of a session.
type Report struct {
	Machine   Machine
	Smoke     bool
	Command   string
	Started   time.Time
	Took      time.Duration
	Workloads []WorkloadReport
}

// WorkloadReport is one workload's figures, or why it could not run.
type WorkloadReport struct {
	Name, Title string
	Setup       string
	Took        time.Duration
	Figures     []Figure
	Err         string
}

// Figures lists every figure of the report, in order.
func (r *Report) Figures() []Figure {
	var all []Figure
	for _, w := range r.Workloads {
		all = append(all, w.Figures...)
	}
	return all
}

// Run runs the selected workloads one after the other and reports their
// figures. A workload that fails is reported with its error; Run itself
// fails only when the session cannot start (no PostgreSQL) or ctx ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.BenchTime == "" {
		cfg.BenchTime = "2s"
	}
	for _, name := range cfg.Only {
		if !slices.Contains(Workloads(), name) {
			return nil, fmt.Errorf("bench: unknown workload %q (have %s)", name, strings.Join(Workloads(), ", "))
		}
	}
	begin := time.Now()
	e, err := newEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	rep := &Report{Machine: machine(e.pgVer), Smoke: cfg.Smoke, Command: cfg.Command, Started: begin.UTC()}
	rep.Machine.Server = "the server at DATABASE_URL"
	if e.cluster != nil {
		rep.Machine.Server = "a throwaway local cluster (testkit/pgtmp: fsync, synchronous_commit and full_page_writes off)"
	}
	for _, w := range workloads {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, w.name) {
			continue
		}
		if w.name == "gobench" && (cfg.Smoke || !cfg.GoBench) {
			continue
		}
		wr := WorkloadReport{Name: w.name, Title: w.title}
		e.log.Info("workload started", "workload", w.name)
		start := time.Now()
		out, err := w.run(ctx, e)
		wr.Took = time.Since(start)
		e.dropDBs()
		if out != nil {
			wr.Setup = out.setup
			for _, f := range out.figures {
				f.Workload = w.title
				if f.Command == "" {
					f.Command = e.command(w.name)
				}
				wr.Figures = append(wr.Figures, f)
			}
		}
		if err != nil {
			wr.Err = err.Error()
			e.log.Error("workload failed", "workload", w.name, "err", err)
		}
		e.log.Info("workload done", "workload", w.name, "took", wr.Took.Round(time.Millisecond))
		for _, f := range wr.Figures {
			e.log.Info("figure", "workload", w.name, "name", f.Name, "value", f.Shown(), "aim", f.Aim.String(), "met", f.Met())
		}
		rep.Workloads = append(rep.Workloads, wr)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.Took = time.Since(begin)
	return rep, nil
}

// command is the command that reproduces a workload's figures.
func (e *env) command(name string) string {
	c := "go run ./tools/bench -only " + name
	if e.cfg.Smoke {
		c += " -smoke"
	}
	return c
}
