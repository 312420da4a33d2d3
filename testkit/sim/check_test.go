package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// checkScenario is a small adaptive job: two seeds with their followers,
// one page of 3 each, a budget of 10, max_age 2 days.
func checkScenario() *Scenario {
	return &Scenario{World: World{Preset: "contract", Churn: sandbox.ChurnHeavyTail, PageSize: 3}, Job: Job{MaxPages: 1, Budget: 10,
		Followers: &List{MaxPages: 1}, Reuse: Reuse{Adaptive: true, MaxAgeDays: 2},
		Seeds: []Seed{{Key: "shortvideo.profiles", Value: "s0_f2_g0"}, {Key: "shortvideo.profiles", Value: "s1_f2_g0"}}}}
}

// bought is a charged answer of it.
func bought(it item, page int64, credits int64) request {
	return request{it: it, page: page, query: fmt.Sprintf("%s?page=%d", it, page), status: 200, credit: credits}
}

// cleanNight is a night every checker accepts: each seed's profile and
// followers bought once, the run done.
func cleanNight(day int64) *nightResult {
	return &nightResult{day: day, timeline: "main", workers: 2, billed: 4,
		requests: []request{bought(profileItem("s0_f2_g0"), 0, 1), bought(profileItem("s1_f2_g0"), 0, 1),
			bought(item{"shortvideo.followers", "s0_f2_g0"}, 0, 1), bought(item{"shortvideo.followers", "s1_f2_g0"}, 0, 1)},
		runs:  []runRow{{id: day + 1, state: "done"}},
		exits: []exit{{args: []string{"run"}, code: 0}},
		tasks: []taskRow{{kind: "shortvideo.profile", key: "s0_f2_g0", state: "done", reason: "ok", outcome: "done"}},
	}
}

func invariants(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Invariant)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestCheckers: each checker accepts a clean night and finds its
// violation in a night that has it.
func TestCheckers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		spoil func(r *nightResult)
		want  []string
	}{
		{"clean", func(*nightResult) {}, nil},
		{"over budget", func(r *nightResult) { r.billed = 11 }, []string{InvBudget}},
		{"bought twice", func(r *nightResult) { r.requests = append(r.requests, r.requests[0]) }, []string{InvBoughtTwice}},
		{"bought twice within a kill's bound", func(r *nightResult) {
			r.requests, r.killed = append(r.requests, r.requests[0]), 2
		}, nil},
		{"a truncated answer's retry", func(r *nightResult) {
			cut := r.requests[0]
			cut.cut = true
			r.requests = append(r.requests, cut)
		}, nil},
		{"unreachable account", func(r *nightResult) {
			r.requests = append(r.requests, bought(profileItem("u0123456789abcdef"), 0, 1))
		}, []string{InvUnreachable}},
		{"past the page limit", func(r *nightResult) {
			r.requests = append(r.requests, bought(item{"shortvideo.followers", "s0_f2_g0"}, 1, 1))
		}, []string{InvUnreachable}},
		{"a free answer is not a purchase", func(r *nightResult) {
			r.requests = append(r.requests, request{it: profileItem("u0123456789abcdef"), status: 404})
		}, nil},
		{"crash", func(r *nightResult) { r.exits = append(r.exits, exit{args: []string{"run"}, code: 1, tail: "boom"}) }, []string{InvExit}},
		{"killed on purpose", func(r *nightResult) {
			r.exits = append(r.exits, exit{args: []string{"run"}, code: -9, signaled: "KILL"})
		}, nil},
		{"run failed", func(r *nightResult) { r.runs[0].state = "failed" }, []string{InvExit}},
		{"stopped for budget", func(r *nightResult) {
			r.runs[0].state, r.runs[0].reason, r.runs[0].spent = "stopped", "credit budget exhausted", true
		}, nil},
		{"done with a task pending", func(r *nightResult) {
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.profile", key: "x", state: "pending"})
		}, []string{InvExit}},
		{"skipped without a reason", func(r *nightResult) {
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.profile", key: "x", state: "skipped", outcome: "skipped_fresh"})
		}, []string{InvExit}},
		{"ended without an outcome", func(r *nightResult) {
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.profile", key: "x", state: "done", reason: "ok"})
		}, []string{InvExit}},
		{"stopped, not by its budget", func(r *nightResult) { r.runs[0].state, r.runs[0].reason = "stopped", "credit budget exhausted" }, []string{InvExit}},
		{"spent: exit 5", func(r *nightResult) { r.exits = append(r.exits, exit{args: []string{"run"}, code: 5}) }, nil},
		{"skipped for budget, would have fitted", func(r *nightResult) {
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.followers", key: "MS4w", handle: "s1_f2_g0", state: "skipped", reason: "adaptive: budget: expected 1 new per 1 credits", outcome: "skipped_budget"})
		}, []string{InvUnspent}},
		{"skipped for budget, its estimate did not fit (by design)", func(r *nightResult) {
			r.billed = 9
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.followers", key: "MS4w", handle: "s1_f2_g0", state: "skipped", reason: "adaptive: budget: expected 1 new per 1 credits", outcome: "skipped_budget", costHigh: 2})
		}, nil},
		{"skipped for budget, its estimate fitted", func(r *nightResult) {
			r.billed = 9
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.followers", key: "MS4w", handle: "s1_f2_g0", state: "skipped", reason: "adaptive: budget: expected 1 new per 1 credits", outcome: "skipped_budget", costHigh: 1})
		}, []string{InvUnspent}},
		{"skipped for budget, would not have fitted", func(r *nightResult) {
			r.billed = 10
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.followers", key: "MS4w", handle: "s1_f2_g0", state: "skipped", reason: "adaptive: budget: expected 1 new per 1 credits", outcome: "skipped_budget"})
		}, nil},
		{"stopped with a visit that fits pending", func(r *nightResult) {
			r.runs[0].state, r.runs[0].reason, r.runs[0].spent = "stopped", "credit budget exhausted", true
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.profile", key: "s1_f2_g0", state: "pending"})
		}, []string{InvUnspent}},
		{"timed out", func(r *nightResult) { r.timedOut = true }, []string{InvLiveness}},
	} {
		c2 := newChecker(checkScenario())
		r := cleanNight(0)
		c.spoil(r)
		vs, err := c2.check(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := invariants(vs); !slices.Equal(got, c.want) {
			t.Errorf("%s: found %v, want %v: %v", c.name, got, c.want, vs)
		}
	}
}

// TestCheckMaxAge: an item the seeds reach, left unvisited for max_age
// days while the nights had the credits, is a violation; visited in
// time, it is not.
func TestCheckMaxAge(t *testing.T) {
	t.Parallel()
	c := newChecker(checkScenario())
	night := func(day int64, drop item) []string {
		r := cleanNight(day)
		r.requests = slices.DeleteFunc(r.requests, func(q request) bool { return q.it == drop })
		vs, err := c.check(r)
		if err != nil {
			t.Fatal(err)
		}
		return invariants(vs)
	}
	s1 := profileItem("s1_f2_g0")
	for day, want := range [][]string{nil, nil, {InvMaxAge}, {InvMaxAge}} {
		drop := s1
		if day == 0 {
			drop = item{}
		}
		if got := night(int64(day), drop); !slices.Equal(got, want) {
			t.Errorf("night %d: %v, want %v", day, got, want)
		}
	}
	if got := night(4, item{}); got != nil {
		t.Errorf("night 4, visited: %v", got)
	}

	// A list whose profile's fetch failed that night is not reached (found
	// by seed 1440: a truncated answer after its retries).
	c = newChecker(checkScenario())
	list := item{"shortvideo.followers", "s1_f2_g0"}
	for day := range int64(4) {
		r := cleanNight(day)
		if day > 0 {
			r.requests = slices.DeleteFunc(r.requests, func(q request) bool { return q.it == list })
			r.tasks = append(r.tasks, taskRow{kind: "shortvideo.profile", key: "s1_f2_g0", state: "failed", reason: "retryable: truncated body", outcome: "failed"})
		}
		vs, err := c.check(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := invariants(vs); slices.Contains(got, InvMaxAge) {
			t.Errorf("night %d, its profile failed: %v", day, vs)
		}
	}
}

// TestCheckTwin: the twin comparison finds other tasks, depths and
// purchases, and an adaptive schedule a prune changed; nights the budget
// decided are compared only by their schedule.
func TestCheckTwin(t *testing.T) {
	t.Parallel()
	c := newChecker(checkScenario())
	main, twin := cleanNight(3), cleanNight(3)
	if vs := c.twin(TwinTiming, main, twin, nil, nil); len(vs) > 0 {
		t.Errorf("equal nights: %v", vs)
	}
	deeper := cleanNight(3)
	deeper.tasks[0].depth = 1
	if got := invariants(c.twin(TwinTiming, deeper, twin, nil, nil)); !slices.Equal(got, []string{InvTiming}) {
		t.Errorf("another depth: %v", got)
	}
	more := cleanNight(3)
	more.requests = append(more.requests, bought(profileItem("s9"), 0, 1))
	if got := invariants(c.twin(TwinPrune, more, twin, nil, nil)); !slices.Equal(got, []string{InvPrune}) {
		t.Errorf("another purchase: %v", got)
	}
	plan := []string{"shortvideo.profile s0 visit=true full_walk=false yield"}
	if got := invariants(c.twin(TwinPrune, main, twin, plan, nil)); !slices.Equal(got, []string{InvPrune}) {
		t.Errorf("another schedule: %v", got)
	}
	stopped := cleanNight(3)
	stopped.runs[0].state = "stopped"
	stopped.tasks[0].depth = 5
	if vs := c.twin(TwinTiming, stopped, twin, nil, nil); len(vs) > 0 {
		t.Errorf("a night the budget stopped compared: %v", vs)
	}
}

// TestCheckCompleteLists: a complete walk that stored other entries than
// the sandbox's list, or fewer (a capped walk taken for complete), is a
// violation; an edge the other end's list explains is not.
func TestCheckCompleteLists(t *testing.T) {
	t.Parallel()
	c := newChecker(checkScenario())
	r := cleanNight(1)
	want, err := c.t.followList("shortvideo.followers", "s0_f2_g0", 1)
	if err != nil || len(want) == 0 {
		t.Fatalf("truth: %v %v", want, err)
	}
	for _, x := range []struct {
		name   string
		stored []string
		bad    bool
	}{
		{"exact", want, false},
		{"capped", want[:len(want)-1], true},
		{"stranger", append(slices.Clone(want), "u0000000000000000"), true},
	} {
		vs, err := c.completeLists(r, []walk{{handle: "s0_f2_g0", list: "followers", pages: 1, stored: x.stored}})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(vs) > 0; got != x.bad {
			t.Errorf("%s: violations %v", x.name, vs)
		}
	}
	// The account a seed's follower follows: the seed, by the seed's
	// followers list, though the follower's own following list lacks it.
	f := want[0]
	following, _ := c.t.followList("shortvideo.following", f, 1)
	vs, err := c.completeLists(r, []walk{{handle: f, list: "following", stored: append(slices.Clone(following), "s0_f2_g0")}})
	if err != nil || len(vs) > 0 {
		t.Errorf("an edge the seed's list explains: %v %v", vs, err)
	}
	// A post of c7_r2 has 11 comments on day 2.
	r.day = 2
	for stored, bad := range map[int64]bool{11: false, 10: true} {
		vs, _ := c.completeLists(r, []walk{{handle: postURL("contract", "p0_c7_r2"), list: "comments", comments: stored}})
		if got := len(vs) > 0; got != bad {
			t.Errorf("%d comments stored of 11: violations %v", stored, vs)
		}
	}
}
