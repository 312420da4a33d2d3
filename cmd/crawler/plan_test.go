package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/plan"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

type planOut struct {
	CanRun   bool   `json:"can_run"`
	Reason   string `json:"reason"`
	Next     string `json:"next"`
	Bound    int64  `json:"bound"`
	Estimate int64  `json:"estimate"`
	Seeds    []struct {
		Kind, Key string
	} `json:"seeds"`
}

// sandboxUsage is the usage of cliKey at the sandbox serving base (GET
// /debug/usage), for a sandbox in another process.
func sandboxUsage(t *testing.T, base string) sandbox.Usage {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(base, "/api")+"/debug/usage", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", cliKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u sandbox.Usage
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /debug/usage: %d, %v", resp.StatusCode, err)
	}
	return u
}

func planJSON(t *testing.T, env map[string]string, args ...string) (planOut, result) {
	t.Helper()
	res := invoke(t, env, append([]string{"plan", "--json"}, args...)...)
	var p planOut
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatalf("plan --json: %v\nstdout %q\nstderr %q", err, res.stdout, res.stderr)
	}
	return p, res
}

// crawler plan's upper bound is at least what the run then bills, on the
// example job and on a deep snowball job; its estimate from the first
// run is within 10% of what a repeat run at the same world time bills;
// planning spends nothing and writes nothing.
func TestPlanBoundAndEstimate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args func(t *testing.T, base string) []string
	}{
		{"example", func(t *testing.T, base string) []string {
			return []string{"--base-url", base, "../../jobs.example.yaml"}
		}},
		{"snowball_depth2", func(t *testing.T, base string) []string {
			return []string{writeJob(t, fmt.Sprintf(`name: snowball
api: {base_url: %s}
limits: {max_depth: 2, workers: 4}
seeds: {shortvideo: {profiles: [seed_f3_g0]}}
expand: {followers: {max_pages: 1}, follower_profiles: {}}
`, base))}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// A `crawler sandbox` process: only the crawls talk to it, and
			// serving them under the race detector cost some 1.5 CPU-s.
			base := sandboxProcess(t)
			billable := func() int64 { return sandboxUsage(t, base).Billable }
			db := pgtest.DB(t)
			env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
			args := c.args(t, base)
			if res := invoke(t, env, "migrate"); res.code != 0 {
				t.Fatalf("migrate: %+v", res)
			}
			p, res := planJSON(t, env, args...)
			if res.code != 0 || !p.CanRun || p.Next != "start a new run" || p.Estimate != -1 {
				t.Fatalf("plan: exit %d %+v\n%s", res.code, p, res.stderr)
			}
			if b := billable(); b != 0 || countRuns(t, db) != 0 {
				t.Fatalf("plan spent %d credits or wrote a run", b)
			}
			// The runs go through the prebuilt binary: what is tested here is
			// plan, in process; a crawl under the race detector costs 10x.
			binEnv := []string{"DATABASE_URL=" + db, "CRAWLER_API_KEY=" + cliKey}
			if res := runBin(t, binEnv, append([]string{"run", "--live", "off"}, args...)...); res.code != 0 {
				t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
			}
			first := billable()
			t.Logf("%s: bound %d, first run billed %d", c.name, p.Bound, first)
			if p.Bound < first || p.Bound == math.MaxInt64 {
				t.Errorf("bound %d < billed %d (or no bound)", p.Bound, first)
			}
			again, res := planJSON(t, env, args...)
			if res.code != 0 || again.Estimate < 0 {
				t.Fatalf("plan after a run: exit %d %+v\n%s", res.code, again, res.stderr)
			}
			if res := runBin(t, binEnv, append([]string{"run", "--live", "off"}, args...)...); res.code != 0 {
				t.Fatalf("repeat run: exit %d\n%s", res.code, res.stderr)
			}
			repeat := billable() - first
			t.Logf("%s: estimate %d, repeat run billed %d", c.name, again.Estimate, repeat)
			if diff := math.Abs(float64(again.Estimate - repeat)); diff > 0.1*float64(repeat) {
				t.Errorf("estimate %d is more than 10%% off the repeat run's %d", again.Estimate, repeat)
			}
			if again.Bound < repeat {
				t.Errorf("bound %d < repeat billed %d", again.Bound, repeat)
			}
		})
	}
}

// crawler plan exits 2 with the reason when the job cannot run: the key
// variable unset (and never printed when set), the database unreachable
// or not migrated (plan never migrates it).
func TestPlanCannotRun(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := crashJob(t, up.url)
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no key", map[string]string{"DATABASE_URL": db}, "CRAWLER_API_KEY is not set"},
		{"no database", map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?connect_timeout=2", "CRAWLER_API_KEY": cliKey}, "cannot run: cannot reach PostgreSQL"},
	} {
		res := invoke(t, c.env, "plan", job)
		if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, res.code, res.stderr, exitUsage, c.want)
		}
		if strings.Contains(res.stdout+res.stderr, cliKey) {
			t.Errorf("%s: the key was printed", c.name)
		}
	}
}

// On a database never migrated, crawler plan still plans (no history: a
// new run and its bound) and writes nothing: the database stays empty.
func TestPlanOnFreshDatabase(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.EmptyDB(t)
	job := crashJob(t, up.url)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	p, res := planJSON(t, env, job)
	if res.code != 0 || !p.CanRun || !strings.Contains(p.Next, "not migrated") || p.Bound <= 0 || p.Estimate != -1 || len(p.Seeds) == 0 {
		t.Errorf("plan on a fresh database: exit %d %+v\nstderr %s", res.code, p, res.stderr)
	}
	if res := invoke(t, env, "plan", job); res.code != 0 || !strings.Contains(res.stdout, "not migrated") {
		t.Errorf("plan: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("plan created %d tables (%v)", n, err)
	}
}

// TestPrintAdaptive: crawler plan prints an adaptive schedule's totals,
// its reasons, and at most adaptiveShown items of each decision, the rest
// counted.
func TestPrintAdaptive(t *testing.T) {
	t.Parallel()
	a := &plan.Adaptive{Budget: 30, Visit: 2, Skip: 23, Cost: 6, Yield: 12, YieldPerCred: 2, StalenessLeft: 4.5,
		ByReason: map[string]int{"yield": 1, "full_walk": 1, "below_floor": 22, "unreached": 1}, Forget: 4}
	a.Items = append(a.Items,
		plan.AdaptiveItem{Kind: "shortvideo.followers", Key: "MS4w", Visit: true, FullWalk: true, Reason: "full_walk", Rate: 3, AgeDays: 2, Yield: 6, Cost: 4, CostHigh: 5},
		plan.AdaptiveItem{Kind: "shortvideo.profile", Key: "alice", Visit: true, Reason: "yield", Rate: 0.5, AgeDays: 4, Yield: 1.7, Cost: 1})
	for i := range 23 {
		a.Items = append(a.Items, plan.AdaptiveItem{Kind: "shortvideo.profile", Key: fmt.Sprint("still", i), Reason: "below_floor", Rate: 0.01, AgeDays: 1, Yield: 0.02, Cost: 1})
	}
	var b strings.Builder
	printAdaptive(&b, a)
	out := b.String()
	for _, want := range []string{
		"adaptive: of 25 known items, refresh 2 and skip 23; expected 12.0 new entries and counter changes for 6.0 of 30 credits (2.00 per credit); expected unseen after the run: 4.5\n",
		"adaptive: by reason: below_floor 22, full_walk 1, unreached 1, yield 1 (items never seen are not listed: they are all visited)\n",
		"adaptive: unreached: not found by the last run from the job's seeds now",
		"adaptive: 4 items unreached for twice max_age are forgotten by the next run\n",
		"adaptive:   walk whole shortvideo.followers MS4w (full_walk): 3.00 a day, last visit 2.0 days ago, expected 6.0 for 4.0 credits (at most 5)\n",
		"adaptive:   refresh shortvideo.profile alice (yield)",
		"adaptive:   skip shortvideo.profile still0 (below_floor)",
		"adaptive:   ... and 3 more (crawler plan --json lists them all)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "adaptive:   skip "); n != adaptiveShown {
		t.Errorf("%d skipped items printed, want %d", n, adaptiveShown)
	}
}
