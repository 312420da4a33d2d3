package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/sim"
)

// Workload 16: revisit policies at equal budget. M accounts of a sandbox
// churn world are harvested with their followers lists: night 0 (world day
// 0) is a full refresh without reuse nor budget, costing C credits. Then,
// at each of three budgets B = round(share * C), each policy gets its own
// copy of night 0's database and runs N nights (world days 1..N, a new run
// each, the database aged by a day before each): no reuse; fixed windows
// (stop_at_seen with refresh_after on profiles and full_walk_every, a few
// configurations); adaptive revisits (the defaults); and an oracle
// simulated from the ground truth (every list's true new followers and
// the stop-at-seen pages they need, visits chosen greedily by new entries
// per credit). Three worlds: steady heavy-tailed rates (heavytail), and
// log-normal rates with bursts, or drifting (bursts, drift). Scored
// against the truth: arrivals captured (new follow edges first stored),
// mean detection delay, credits spent.

// revisitJob is the job name every night of every policy runs under (the
// reuse lookups and revisit estimates are per job).
const revisitJob = "bench-revisit"

// revisitPageSize is the sandbox's page size, which the oracle's cost
// model uses too.
const revisitPageSize = 50

// revisitWorkers is limits.workers of every night.
const revisitWorkers = 2

// revisitWorld is a sandbox churn world the policies are run in.
type revisitWorld struct{ name, churn string }

type revisitSizes struct {
	accounts, nights int
	worlds           []revisitWorld
	budgets          []float64 // shares of a full refresh
	fixed            []fixedWindow
}

// fixedWindow is a configuration of the fixed-window policy.
type fixedWindow struct {
	refreshAfter  string // reuse.seeds.shortvideo.profiles
	fullWalkEvery int
}

// window is refreshAfter ("3d") as a job-file duration.
func (f fixedWindow) window() string {
	days, _ := strconv.Atoi(strings.TrimSuffix(f.refreshAfter, "d"))
	return fmt.Sprintf("%dh", 24*days)
}

func (f fixedWindow) String() string {
	return fmt.Sprintf("refresh_after %s, full_walk_every %d", f.refreshAfter, f.fullWalkEvery)
}

func (e *env) revisitSizes() revisitSizes {
	steady := revisitWorld{"steady", sandbox.ChurnHeavyTail}
	if e.cfg.Smoke {
		// acct0010..0014 carry the steady world's 7 arrivals of days 1-3
		// (30 accounts had the same 7): 15 keep every figure computed,
		// the best fixed window capturing 4, adaptive and the oracle 7.
		return revisitSizes{accounts: 15, nights: 3, worlds: []revisitWorld{steady}, budgets: []float64{0.3}, fixed: []fixedWindow{{"3d", 30}}}
	}
	return revisitSizes{accounts: 200, nights: 10,
		worlds:  []revisitWorld{steady, {"bursts", sandbox.ChurnBursts}, {"drift", sandbox.ChurnDrift}},
		budgets: []float64{0.05, 0.2, 0.5},
		fixed:   []fixedWindow{{"1d", 7}, {"3d", 30}, {"7d", 30}}}
}

func revisitHandles(n int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("acct%04d_f120", i)
	}
	return h
}

// revisitYAML is the job of a night: reuse is the reuse section and expand
// the followers edge (YAML flow mappings); budget 0 is no max_credits.
func revisitYAML(baseURL string, handles []string, budget int64, expand, reuse string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\napi:\n  base_url: %s\n  key_env: CRAWLER_API_KEY\n", revisitJob, baseURL)
	fmt.Fprintf(&b, "limits:\n  workers: %d\n  max_pages: 1000\n", revisitWorkers)
	if budget > 0 {
		fmt.Fprintf(&b, "  max_credits: %d\n", budget)
	}
	fmt.Fprintf(&b, "seeds:\n  shortvideo:\n    profiles: [%s]\n", strings.Join(handles, ", "))
	fmt.Fprintf(&b, "expand: {followers: %s}\n", expand)
	if reuse != "" {
		fmt.Fprintf(&b, "reuse: %s\n", reuse)
	}
	return b.String()
}

// revisitPolicy is a policy the crawler runs.
type revisitPolicy struct {
	name   string
	expand string
	reuse  string
}

// revisitTruth is the ground truth of a world over days 0..N.
type revisitTruth struct {
	churn   string
	handles []string
	arrival map[string]int64   // followee \x00 follower -> the day it arrived (1..N)
	count   map[string][]int64 // handle -> follower count at day 0..N
	arrived int                // arrivals of days 1..N
	present int                // of which still followers at day N
}

func edgeKey(followee, follower string) string { return followee + "\x00" + follower }

func loadRevisitTruth(churn string, handles []string, nights int) (*revisitTruth, error) {
	t := &revisitTruth{churn: churn, handles: handles, arrival: map[string]int64{}, count: map[string][]int64{}}
	for _, h := range handles {
		for d := int64(0); d <= int64(nights); d++ {
			at, err := sandbox.ChurnTruthIn(churn, h, d)
			if err != nil {
				return nil, err
			}
			t.count[h] = append(t.count[h], int64(at.FollowerCount))
			if d == 0 {
				continue
			}
			ch, err := sandbox.ChurnChangesIn(churn, h, d-1, d)
			if err != nil {
				return nil, err
			}
			for _, f := range ch.NewFollowers {
				if _, ok := t.arrival[edgeKey(h, f)]; !ok {
					t.arrival[edgeKey(h, f)] = d
					t.arrived++
				}
			}
		}
		ch, err := sandbox.ChurnChangesIn(churn, h, 0, int64(nights))
		if err != nil {
			return nil, err
		}
		t.present += len(ch.NewFollowers)
	}
	return t, nil
}

// revisitScore is what a policy achieved over nights 1..N.
type revisitScore struct {
	name       string
	captured   int     // true arrivals first stored in a night
	delaySum   float64 // capture day - arrival day, summed over captured
	other      int     // edges first stored in nights 1..N that are no arrival of days 1..N
	credits    int64
	listPages  int64     // of credits, on follower list pages (the rest: profiles)
	maxNight   int64     // most credits billed in one night
	counterErr []float64 // per night
}

func (s *revisitScore) delay() float64 { return s.delaySum / math.Max(1, float64(s.captured)) }
func (s *revisitScore) meanCounterErr() float64 {
	if len(s.counterErr) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, v := range s.counterErr {
		sum += v
	}
	return sum / float64(len(s.counterErr))
}

func runRevisit(ctx context.Context, e *env) (*outcome, error) {
	rs := e.revisitSizes()
	handles := revisitHandles(rs.accounts)
	out := &outcome{}
	var setups []string
	for _, w := range rs.worlds {
		truth, err := loadRevisitTruth(w.churn, handles, rs.nights)
		if err != nil {
			return out, err
		}
		// Night 0: a full refresh, once, copied for every policy.
		tmpl, err := e.freshDB(ctx, "rv0")
		if err != nil {
			return out, err
		}
		pool, err := e.pool(ctx, tmpl, revisitWorkers)
		if err != nil {
			return out, err
		}
		_, full, _, err := revisitNight(ctx, pool, w.churn, 0, func(u string) string { return revisitYAML(u, handles, 0, "{}", "") })
		pool.Close()
		if err != nil {
			return out, fmt.Errorf("%s: night 0: %w", w.name, err)
		}
		setups = append(setups, fmt.Sprintf("%s (%s): C = %d credits, %d follower arrivals over days 1..%d (%d still followers at day %d)",
			w.name, w.churn, full, truth.arrived, rs.nights, truth.present, rs.nights))
		for _, share := range rs.budgets {
			budget := int64(math.Round(share * float64(full)))
			label := fmt.Sprintf("%s, %.0f%%", w.name, 100*share)
			e.log.Info("revisit", "world", w.name, "night0_credits", full, "budget", budget)
			policies := []revisitPolicy{{name: "no reuse", expand: "{}"}}
			for _, f := range rs.fixed {
				policies = append(policies, revisitPolicy{name: "fixed " + f.refreshAfter + "/" + strconv.Itoa(f.fullWalkEvery), expand: "{stop_at_seen: true}",
					reuse: fmt.Sprintf("{seeds: {shortvideo.profiles: %s}, full_walk_every: %d}", f.window(), f.fullWalkEvery)})
			}
			policies = append(policies, revisitPolicy{name: "adaptive", expand: "{}", reuse: "{adaptive: true}"})
			var scores []*revisitScore
			for _, p := range policies {
				begin := time.Now()
				s, err := e.revisitPolicy(ctx, p, tmpl, truth, rs.nights, budget)
				if err != nil {
					return out, fmt.Errorf("%s: %s: %w", label, p.name, err)
				}
				e.log.Info("revisit policy", "world", w.name, "budget", budget, "policy", p.name, "captured", s.captured, "credits", s.credits,
					"delay", s.delay(), "took", time.Since(begin).Round(time.Millisecond))
				scores = append(scores, s)
			}
			oracle := revisitOracle(truth, rs.nights, budget)
			scores = append(scores, oracle)
			out.figures = append(out.figures, revisitFigures(label, truth, rs.nights, budget, scores)...)
		}
	}
	out.setup = fmt.Sprintf("%d short-video accounts acct<NNNN>_f120 (120 followers at day 0), page size %d, seeds = their profiles, expand followers, "+
		"limits.max_pages 1000, %d workers, the pipeline in process. In each world, night 0 (world day 0), no reuse nor budget: a full refresh of C credits, its database copied for every policy and budget. "+
		"Then %d nights (world days 1..%d), each a new run on a new sandbox at that day, the policy's database aged by a day before (every timestamptz column of schemas crawl, shortvideo, photosocial), "+
		"at max_credits B = round(share * C) for shares %s: no reuse; fixed windows (stop_at_seen on followers, reuse.seeds.shortvideo.profiles refresh_after and full_walk_every: %s); "+
		"reuse.adaptive with its defaults; and an oracle simulated from sandbox.ChurnChangesIn without the crawler (lists only, stop-at-seen cost 1 page for no new entry, else floor(E/%d)+2 capped at the list's pages, visits greedily by true new entries per credit within B). "+
		"Worlds: %s. "+
		"A captured arrival is a shortvideo.follows row first stored in night n that arrived on day a <= n (delay n-a); credits are the sandbox's billed credits, shown with their share of B times the nights.",
		rs.accounts, revisitPageSize, revisitWorkers, rs.nights, rs.nights, shares(rs.budgets), strings.Join(fixedNames(rs.fixed), "; "), revisitPageSize, strings.Join(setups, "; "))
	return out, nil
}

// revisitOracleWhy is why adaptive falls short of the oracle where it does.
const revisitOracleWhy = "the oracle knows each night which lists gained entries and buys exactly those; adaptive knows a list's rate only from its own past visits. " +
	"At a small share of a full refresh it visits few lists a night, so a list whose rate jumps (a burst) is found only when its estimate or max_age brings it back: " +
	"the bursts world loses most, the steady and drift worlds less, and from 20% of a full refresh the estimates have the visits they need."

// revisitFigures are the figures of one world at one budget: adaptive
// against the best fixed window and the oracle, then each policy's
// arrivals captured, delay and credits (scores: no reuse, the fixed
// windows, adaptive, the oracle).
func revisitFigures(label string, truth *revisitTruth, nights int, budget int64, scores []*revisitScore) []Figure {
	fixed, adaptive, oracle := scores[1:len(scores)-2], scores[len(scores)-2], scores[len(scores)-1]
	best := slices.MaxFunc(fixed, func(a, b *revisitScore) int { return cmp.Compare(a.captured, b.captured) })
	ratio := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	var all []string
	for _, s := range scores {
		all = append(all, fmt.Sprintf("%s %d", s.name, s.captured))
	}
	detail := fmt.Sprintf("arrivals captured of %d: %s", truth.arrived, strings.Join(all, ", "))
	figs := []Figure{
		{Name: label + ": adaptive ÷ best fixed window: arrivals captured", Value: ratio(adaptive.captured, best.captured), Aim: atLeast(1),
			Detail: fmt.Sprintf("adaptive %d, best fixed (%s) %d; %s", adaptive.captured, best.name, best.captured, detail)},
		{Name: label + ": adaptive ÷ oracle: arrivals captured", Value: ratio(adaptive.captured, oracle.captured), Aim: atLeast(0.9),
			Detail: fmt.Sprintf("adaptive %d, oracle %d; %s", adaptive.captured, oracle.captured, detail), Why: revisitOracleWhy},
	}
	spend := float64(budget) * float64(nights)
	for _, s := range scores {
		counter := ""
		if s != oracle {
			counter = fmt.Sprintf("; follower counter error %.4f", s.meanCounterErr())
		}
		figs = append(figs, Figure{Name: label + ": " + s.name, Value: float64(s.captured),
			Text: fmt.Sprintf("%d (%.1f%%), %.2f days, %d credits (%.0f%%)", s.captured, 100*float64(s.captured)/math.Max(1, float64(truth.arrived)),
				s.delay(), s.credits, 100*float64(s.credits)/math.Max(1, spend)),
			Detail: fmt.Sprintf("arrivals captured (of %d), mean detection delay, credits billed over %d nights of B = %d (%d on follower list pages, %d on profiles; most in a night %d); %d other edges first stored%s",
				truth.arrived, nights, budget, s.listPages, s.credits-s.listPages, s.maxNight, s.other, counter)})
	}
	return figs
}

func shares(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = fmt.Sprintf("%.0f%%", 100*f)
	}
	return strings.Join(s, ", ")
}

func fixedNames(fs []fixedWindow) []string {
	var s []string
	for _, f := range fs {
		s = append(s, f.String())
	}
	return s
}

// revisitNight runs one night at world day of world churn: a new run of
// the job yaml makes for the sandbox's URL, to its end. It returns the run
// and the credits the sandbox billed.
func revisitNight(ctx context.Context, pool *pgxpool.Pool, churn string, day int64, yaml func(baseURL string) string) (runID, credits, listCredits int64, err error) {
	up, err := newUpstream(sandbox.Config{Churn: churn, WorldTime: day, PageSize: revisitPageSize}, false)
	if err != nil {
		return 0, 0, 0, err
	}
	defer up.close()
	job, err := jobfile.Parse(revisitJob+".yaml", []byte(yaml(up.url)))
	if err != nil {
		return 0, 0, 0, err
	}
	runID, err = pipeline.Start(ctx, pool, job)
	if err != nil {
		return 0, 0, 0, err
	}
	p := &inProcess{pool: pool, job: job, runID: runID}
	sum, err := p.run(ctx)
	// A night that spends its budget stops (resumable): that is its end.
	if se := (*pipeline.StopError)(nil); errors.As(err, &se) && strings.Contains(se.Err.Error(), "credit budget exhausted") {
		err = nil
	} else if err == nil && sum.State != "done" {
		err = fmt.Errorf("run %d ended %s: %s", runID, sum.State, sum.Reason)
	}
	if err != nil {
		return runID, 0, 0, err
	}
	u := up.sb.Usage(apiKey)
	return runID, u.Credits, u.ByEndpoint["/shortvideo/user/followers"].Credits, nil
}

// revisitPolicy runs nights 1..N of policy p on a copy of night 0's
// database and scores them against the truth.
func (e *env) revisitPolicy(ctx context.Context, p revisitPolicy, tmpl string, truth *revisitTruth, nights int, budget int64) (*revisitScore, error) {
	dsn, err := e.cloneDB(ctx, "rv", tmpl)
	if err != nil {
		return nil, err
	}
	pool, err := e.pool(ctx, dsn, revisitWorkers)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	s := &revisitScore{name: p.name}
	for n := int64(1); n <= int64(nights); n++ {
		if err := sim.AgeDB(ctx, pool); err != nil {
			return nil, err
		}
		runID, credits, listCredits, err := revisitNight(ctx, pool, truth.churn, n, func(u string) string { return revisitYAML(u, truth.handles, budget, p.expand, p.reuse) })
		if err != nil {
			return nil, fmt.Errorf("night %d: %w", n, err)
		}
		s.credits += credits
		s.listPages += listCredits
		s.maxNight = max(s.maxNight, credits)
		rows, err := pool.Query(ctx, `SELECT followee, follower FROM shortvideo.follows WHERE first_seen_run = $1`, runID)
		if err != nil {
			return nil, err
		}
		var followee, follower string
		_, err = pgx.ForEachRow(rows, []any{&followee, &follower}, func() error {
			if a, ok := truth.arrival[edgeKey(followee, follower)]; ok && a <= n {
				s.captured++
				s.delaySum += float64(n - a)
			} else {
				s.other++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		rows, err = pool.Query(ctx, `SELECT DISTINCT ON (unique_id) unique_id, follower_count FROM shortvideo.user_snapshots
			WHERE unique_id = ANY($1) ORDER BY unique_id, run_id DESC`, truth.handles)
		if err != nil {
			return nil, err
		}
		var handle string
		var stored *int64
		var errSum float64
		seen := 0
		_, err = pgx.ForEachRow(rows, []any{&handle, &stored}, func() error {
			want := truth.count[handle][n]
			got := int64(0)
			if stored != nil {
				got = *stored
			}
			errSum += math.Abs(float64(got-want)) / math.Max(1, float64(want))
			seen++
			return nil
		})
		if err != nil {
			return nil, err
		}
		if seen != len(truth.handles) {
			return nil, fmt.Errorf("night %d: %d accounts with a snapshot, want %d", n, seen, len(truth.handles))
		}
		s.counterErr = append(s.counterErr, errSum/float64(seen))
	}
	return s, nil
}

// revisitOracle simulates a policy that knows every list's true new
// followers each night and visits the lists that give the most new
// entries per credit (stop-at-seen pages), within budget.
func revisitOracle(truth *revisitTruth, nights int, budget int64) *revisitScore {
	s := &revisitScore{name: "oracle"}
	last := map[string]int64{} // handle -> day of its last visit (0: night 0)
	type visit struct {
		h     string
		news  []string
		pages int64
	}
	for n := int64(1); n <= int64(nights); n++ {
		var vs []visit
		for _, h := range truth.handles {
			ch, err := sandbox.ChurnChangesIn(truth.churn, h, last[h], n)
			if err != nil || len(ch.NewFollowers) == 0 {
				continue
			}
			e := int64(len(ch.NewFollowers))
			pages := min(e/revisitPageSize+2, max(1, (truth.count[h][n]+revisitPageSize-1)/revisitPageSize))
			vs = append(vs, visit{h, ch.NewFollowers, pages})
		}
		slices.SortStableFunc(vs, func(a, b visit) int {
			return cmp.Compare(float64(len(b.news))/float64(b.pages), float64(len(a.news))/float64(a.pages))
		})
		left, spent := budget, int64(0)
		for _, v := range vs {
			if v.pages > left {
				continue
			}
			left -= v.pages
			spent += v.pages
			last[v.h] = n
			for _, f := range v.news {
				if a, ok := truth.arrival[edgeKey(v.h, f)]; ok {
					s.captured++
					s.delaySum += float64(n - a)
				} else {
					s.other++
				}
			}
		}
		s.credits += spent
		s.listPages += spent
		s.maxNight = max(s.maxNight, spent)
	}
	return s
}
