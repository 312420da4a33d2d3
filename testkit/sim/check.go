package sim

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The invariants, checked after every night against the sandbox's ground
// truth (what it answered and charged, request by request, and its world
// on that day), never against the crawler's own accounting.
const (
	// InvBudget: the sandbox charged a night at most limits.max_credits,
	// whatever the prices, processes and kills.
	InvBudget = "budget"
	// InvBoughtTwice: no request was charged twice in a night, beyond one
	// in flight per worker of each process killed (README, "Stopping and
	// crashing"). A truncated answer's retry is not counted.
	InvBoughtTwice = "bought-twice"
	// InvCompleteList: every walk the database holds as complete (it
	// reached the list's end) stored exactly the sandbox's list that day.
	InvCompleteList = "complete-list"
	// InvUnreachable: nothing the job's seeds do not reach that day (by
	// its edges, max_depth and page limits) took a credit.
	InvUnreachable = "unreachable"
	// InvMaxAge: an adaptive job visits every item its seeds reach at
	// least every max_age days, while the night has the credits for it.
	InvMaxAge = "max-age"
	// InvUnspent: an adaptive night leaves no credit unspent while a visit
	// it skipped for budget would have fitted.
	InvUnspent = "unspent"
	// InvTiming: the same night with one worker and one process gives the
	// same tasks at the same depths (and buys the same requests).
	InvTiming = "timing"
	// InvPrune: a prune before a night changes nothing that night buys.
	InvPrune = "prune"
	// InvLiveness: a night ends within the night timeout (minutes, where
	// it takes seconds): no process waits forever.
	InvLiveness = "liveness"
	// InvExit: every crawler process exits with a documented code for
	// what happened (0, 3 for a budget or a signal, 4 for failed tasks),
	// and every run ends with each task done, or failed or skipped with a
	// reason.
	InvExit = "exit"
)

// Violation is an invariant that did not hold.
type Violation struct {
	Night     int64
	Timeline  string // "main", or "twin" (the night run again on a copy)
	Invariant string
	Detail    string
}

func (v Violation) String() string {
	tl := ""
	if v.Timeline != "main" {
		tl = " (" + v.Timeline + ")"
	}
	return fmt.Sprintf("night %d%s: %s: %s", v.Night, tl, v.Invariant, v.Detail)
}

// checker checks a scenario's nights; it keeps what the main timeline
// visited across nights (max_age).
type checker struct {
	s          *Scenario
	t          *truth
	lastVisit  map[item]int64 // night of the item's latest answer
	firstReach map[item]int64 // first night the seeds reached it
	// twins counts the twin nights by kind; compared, those whose tasks
	// and purchases were compared (their outcome did not hang on timing).
	twins, compared map[string]int
	// abandoned are the credits charged for answers abandoned
	// (World.BillAbandoned), every night; overBy the nights they took
	// over max_credits.
	abandoned int64
	overBy    int
	// estimated counts the done adaptive nights that left credits unspent
	// only because a skipped visit's estimate at most (cost_high) did not
	// fit in them while its true cost did (docs/simulator.md, by design);
	// estimatedLeft the credits those nights left.
	estimated     int
	estimatedLeft int64
}

func newChecker(s *Scenario) *checker {
	return &checker{s: s, t: newTruth(s), lastVisit: map[item]int64{}, firstReach: map[item]int64{},
		twins: map[string]int{}, compared: map[string]int{}}
}

// night checks one night of a timeline: what it did (check) and the
// complete walks its database holds.
func (c *checker) night(ctx context.Context, tl *timeline, r *nightResult) ([]Violation, error) {
	out, err := c.check(r)
	if err != nil || r.timedOut {
		return out, err
	}
	var walks []walk
	var content []contentWalk
	err = tl.withConn(ctx, func(conn *pgx.Conn) (err error) {
		if walks, err = completeWalks(ctx, conn, r.runIDs()); err != nil {
			return err
		}
		content, err = completeContentWalks(ctx, conn, r.runIDs())
		return err
	})
	if err != nil {
		return nil, err
	}
	vs, err := c.completeLists(r, walks)
	if err != nil {
		return nil, err
	}
	cv, err := c.completeContentLists(r, content)
	return append(append(out, vs...), cv...), err
}

// check checks what a night did: the sandbox's answers and charges, the
// processes' exits, the runs and their tasks.
func (c *checker) check(r *nightResult) ([]Violation, error) {
	var out []Violation
	add := func(inv, format string, args ...any) {
		out = append(out, Violation{Night: r.day, Timeline: r.timeline, Invariant: inv, Detail: fmt.Sprintf(format, args...)})
	}
	if r.timedOut {
		var ex []string
		for _, e := range r.exits {
			ex = append(ex, fmt.Sprintf("[%s %d: %s]", e.args[0], e.code, e.tail))
		}
		add(InvLiveness, "the night did not end within %s (%s); its processes, killed: %s", NightTimeout, r.describe(), strings.Join(ex, " "))
		return out, nil
	}
	reach, err := c.t.reach(r.day)
	if err != nil {
		return nil, err
	}
	c.budget(r, add)
	c.boughtTwice(r, add)
	known, err := c.knownReach(r.day, reach)
	if err != nil {
		return nil, err
	}
	c.unreachable(r, known, add)
	c.exits(r, add)
	if c.s.Job.Reuse.Adaptive {
		c.adaptive(r, reach, add)
	}
	return out, nil
}

// budget: the sandbox charged the night at most max_credits, and beyond
// it at most what answers their client had given up on cost
// (World.BillAbandoned): the crawler takes such a request as not billed
// and its retry reuses its reservation (docs/budget.md, the bound it
// promises then).
func (c *checker) budget(r *nightResult, add func(string, string, ...any)) {
	c.abandoned += r.abandoned
	if b := c.s.Job.Budget; b > 0 && r.billed > b && r.billed-r.abandoned <= b {
		c.overBy++
	}
	if b := c.s.Job.Budget; b > 0 && r.billed-r.abandoned > b {
		// What the answers charged above 1 without saying so in their
		// body: a client that settles them at 1 counts that much less.
		// And what truncated answers were charged: their body, cut, says
		// nothing either.
		var unsaid, cut int64
		for _, q := range r.requests {
			if q.credit > 1 && !c.s.World.says(q.it.kind) {
				unsaid += q.credit - 1
			}
			if q.cut {
				cut += q.credit
			}
		}
		add(InvBudget, "the sandbox charged %d credits, max_credits is %d (%s; %d credits charged above 1 by answers not saying what they cost, %d by truncated answers, %d by abandoned ones)",
			r.billed, b, r.describe(), unsaid, cut, r.abandoned)
	}
}

// boughtTwice: no charged request twice, but truncated ones and the
// requests in flight of the processes killed.
func (c *checker) boughtTwice(r *nightResult, add func(string, string, ...any)) {
	seen := map[string]int{}
	for _, q := range r.requests {
		if q.credit > 0 && !q.cut && !q.abandoned { // neither was read: its retry is the purchase
			seen[q.query]++
		}
	}
	extra, dups := 0, []string{}
	for _, k := range sortedKeys(seen) {
		if n := seen[k]; n > 1 {
			extra += n - 1
			dups = append(dups, fmt.Sprintf("%s x%d", k, n))
		}
	}
	if extra > r.killed {
		add(InvBoughtTwice, "%d requests bought again, bound %d (in flight of the processes killed): %s", extra, r.killed, firstN(dups, 4))
	}
}

// knownReach is what the crawler may take as reached on day: today's
// reach, and for an adaptive job the items reached on the days of twice
// its max_age before (a list it does not read tonight leads to its entries
// as a walk within twice max_age read them, docs/revisit.md).
func (c *checker) knownReach(day int64, today map[item]reached) (map[item]reached, error) {
	if !c.s.Job.Reuse.Adaptive {
		return today, nil
	}
	maxAge := 2 * int64(cmp.Or(c.s.Job.Reuse.MaxAgeDays, 30))
	out := maps.Clone(today)
	for d := day - 1; d >= max(0, day-maxAge); d-- {
		r, err := c.t.reach(d)
		if err != nil {
			return nil, err
		}
		for it, rr := range r {
			if _, ok := out[it]; !ok {
				out[it] = rr
			}
		}
	}
	return out, nil
}

// unreachable: no charged request for an item the seeds do not reach
// (knownReach), nor for a list page past its limit.
func (c *checker) unreachable(r *nightResult, reach map[item]reached, add func(string, string, ...any)) {
	var stray []string
	for _, q := range r.requests {
		if q.credit == 0 {
			continue
		}
		rr, ok := reach[q.it]
		switch {
		case !ok:
			stray = append(stray, q.it.String())
		case rr.maxPage > 0 && q.page >= int64(rr.maxPage):
			stray = append(stray, fmt.Sprintf("%s page %d (limit %d)", q.it, q.page+1, rr.maxPage))
		}
	}
	if len(stray) > 0 {
		slices.Sort(stray)
		stray = slices.Compact(stray)
		add(InvUnreachable, "%d charged requests the seeds do not reach today: %s", len(stray), firstN(stray, 4))
	}
}

// completeLists compares every complete walk of the night with the
// sandbox's list that day: the edges the walk's run saw are the list.
// The short-video content lists (a creator's videos, a video's comments,
// a comment's replies) are completeContentLists' (contentwalks.go).
func (c *checker) completeLists(r *nightResult, walks []walk) ([]Violation, error) {
	var out []Violation
	for _, w := range walks {
		if w.list == "comments" {
			if want := commentCount(codeOf(w.handle), r.day); w.comments != want {
				out = append(out, Violation{Night: r.day, Timeline: r.timeline, Invariant: InvCompleteList,
					Detail: fmt.Sprintf("comments of %s, complete after %d pages: %d stored, the sandbox lists %d", codeOf(w.handle), w.pages, w.comments, want)})
			}
			continue
		}
		want, err := c.t.followList("shortvideo."+w.list, w.handle, r.day)
		if err != nil {
			return nil, err
		}
		missing, extra := diff(want, w.stored)
		// The database keeps an edge, not the list that saw it: an edge
		// the other end's list holds that day (X is among the followers
		// of an account X's following list lacks; the sandbox's lists are
		// drawn apart) was seen by that list, not by this walk.
		other := map[string]string{"followers": "shortvideo.following", "following": "shortvideo.followers"}[w.list]
		extra = slices.DeleteFunc(extra, func(e string) bool {
			l, err := c.t.followList(other, e, r.day)
			return err == nil && slices.Contains(l, w.handle)
		})
		if len(missing)+len(extra) > 0 {
			out = append(out, Violation{Night: r.day, Timeline: r.timeline, Invariant: InvCompleteList,
				Detail: fmt.Sprintf("%s of %s, complete after %d pages: %d stored, the sandbox lists %d; missing %s; extra %s",
					w.list, w.handle, w.pages, len(w.stored), len(want), firstN(missing, 3), firstN(extra, 3))})
		}
	}
	return out, nil
}

// exits checks the processes' exit codes and how the night's run ended.
func (c *checker) exits(r *nightResult, add func(string, string, ...any)) {
	for _, e := range r.exits {
		ok := e.code == 0 || e.code == 3 || e.code == 4 || e.code == 5 || e.signaled == "KILL" && e.code == -9
		if !ok {
			add(InvExit, "crawler %s exited %d: %s", e.args[0], e.code, e.tail)
		}
	}
	if len(r.runs) == 0 {
		add(InvExit, "no run was worked")
		return
	}
	last := r.runs[len(r.runs)-1]
	switch {
	case last.state == "done":
	case last.state == "stopped" && c.s.Job.Budget > 0 && last.spent:
	default:
		add(InvExit, "run %d ended %s: %s (%s)%s", last.id, last.state, last.reason, r.describe(), r.tails())
	}
	if last.state != "done" {
		return
	}
	var open []string
	for _, t := range r.tasks {
		if t.state == "pending" || t.state == "leased" || t.outcome == "" || (t.state == "failed" || t.state == "skipped") && t.reason == "" {
			open = append(open, fmt.Sprintf("%s %s %s %q (outcome %q)", t.kind, t.key, t.state, t.reason, t.outcome))
		}
	}
	if len(open) > 0 {
		add(InvExit, "run %d is done with %d tasks not ended with a reason: %s (%s)%s", last.id, len(open), firstN(open, 3), r.describe(), r.tails())
	}
}

// adaptive checks an adaptive night: items overdue by max_age left
// unvisited while the night had the credits, and visits skipped for
// budget that would have fitted in what was left.
func (c *checker) adaptive(r *nightResult, reach map[item]reached, add func(string, string, ...any)) {
	// What the processes killed still hold stays spent (docs/budget.md):
	// the crawler cannot know which of their requests in flight were
	// billed. It may count again answers the sandbox charged and the
	// dead process never posted: the checker errs on the lenient side.
	// So does a truncated answer the sandbox charged less than its price
	// (a private profile's, free): the crawler cannot read what it was
	// and bills it at its price.
	left := c.s.Job.Budget - r.billed - r.deadHeld - r.cutOther
	for _, q := range r.requests {
		if p := c.t.price(q.it.kind); q.cut && q.credit < p {
			left -= p - q.credit
		}
	}
	visited := map[item]bool{}
	for _, q := range r.requests {
		if q.status == 200 && !q.abandoned {
			visited[q.it] = true
		}
	}
	if r.timeline == "main" {
		if maxAge := int64(c.s.Job.Reuse.MaxAgeDays); maxAge > 0 {
			// A profile whose fetch failed tonight (after its retries: the
			// exit check counts it) leads to none of its lists: they are
			// children of its answer.
			failed := map[item]bool{}
			for _, t := range r.tasks {
				if t.state == "failed" && strings.HasSuffix(t.kind, ".profile") {
					failed[item{t.kind, t.key}] = true
				}
			}
			var late []string
			for _, it := range sortedItems(reach) {
				rr := reach[it]
				if e, _ := endpointOf(it.kind); e.content {
					continue // no revisit promise binds them (endpoint.content)
				}
				if platform, _, _ := strings.Cut(it.kind, "."); !strings.HasSuffix(it.kind, ".profile") && failed[item{platform + ".profile", it.key}] {
					continue
				}
				if _, ok := c.firstReach[it]; !ok {
					c.firstReach[it] = r.day
				}
				due, ok := c.lastVisit[it]
				if !ok {
					due = c.firstReach[it]
				}
				cost := c.t.cost(it, rr)
				if !visited[it] && cost > 0 && r.day-due >= maxAge && cost <= left {
					late = append(late, fmt.Sprintf("%s (last %s, cost %d)", it, since(c.lastVisit, it), cost))
				}
			}
			if len(late) > 0 {
				add(InvMaxAge, "%d items due by max_age %dd not visited with %d credits left: %s", len(late), maxAge, left, firstN(late, 3))
			}
		}
		for it := range visited {
			c.lastVisit[it] = r.day
		}
	}
	if len(r.runs) == 0 {
		return
	}
	// A done run's visits skipped for budget, a stopped run's visits never
	// started: either would have fitted in what was left.
	state := r.runs[len(r.runs)-1].state
	var fit []string
	estimated := false
	for _, t := range r.tasks {
		switch {
		case state == "done" && t.outcome == "skipped_budget":
		case state == "stopped" && t.state == "pending":
		default:
			continue
		}
		it := item{t.kind, cmp.Or(t.handle, t.key)}
		switch t.kind {
		case "photosocial.comments":
			it.key = codeOf(t.key)
		case "shortvideo.video_comments", "shortvideo.transcript":
			it.key = videoKey(t.key)
		}
		rr, ok := reach[it]
		if !ok {
			continue
		}
		cost := c.t.cost(it, rr)
		if cost <= 0 || cost > left {
			continue
		}
		if state == "done" && float64(left) < t.costHigh {
			// By design (docs/simulator.md): the schedule admits a visit
			// on what it costs at most (revisit.Decision.CostHigh: a list
			// expected to grow, its page limit when never walked), and
			// the truth knows it costs less. Wasted: less than that
			// estimate, a night. Admitting below the estimate is what
			// the crawler must not do, so one within left is a violation.
			estimated = true
			continue
		}
		fit = append(fit, fmt.Sprintf("%s %s (at most %d; estimated %g)", it, t.state, cost, t.costHigh))
	}
	if estimated && len(fit) == 0 {
		c.estimated++
		c.estimatedLeft += left
	}
	if len(fit) > 0 {
		add(InvUnspent, "run %s with %d credits left while %d visits would have fitted: %s", state, left, len(fit), firstN(fit, 3))
	}
}

// twin compares the night of the main timeline with the same night run
// again on a copy of the database taken before it, with one worker and
// one process (and, for TwinPrune, without the prune).
func (c *checker) twin(kind string, main, twin *nightResult, mainPlan, twinPlan []string) []Violation {
	var out []Violation
	add := func(inv, format string, args ...any) {
		out = append(out, Violation{Night: main.day, Timeline: "main", Invariant: inv, Detail: fmt.Sprintf(format, args...)})
	}
	c.twins[kind]++
	inv := InvTiming
	if kind == TwinPrune {
		inv = InvPrune
		if missing, extra := diff(twinPlan, mainPlan); len(missing)+len(extra) > 0 {
			add(inv, "the adaptive schedule differs after the prune: without it %s; with it %s", firstN(missing, 3), firstN(extra, 3))
		}
	}
	if !main.comparable(c.s) || !twin.comparable(c.s) {
		return out // the budget decided, or kills met faults: timing may
	}
	c.compared[kind]++
	shape := func(r *nightResult, withState bool) []string {
		var ts []string
		for _, t := range r.tasks {
			s := fmt.Sprintf("%s %s depth %d", t.kind, t.key, t.depth)
			if withState {
				s += " " + t.state
			}
			ts = append(ts, s)
		}
		return ts
	}
	if missing, extra := diff(shape(twin, true), shape(main, true)); len(missing)+len(extra) > 0 {
		add(inv, "tasks differ from the night run with one worker%s: only there %s; only here %s",
			map[bool]string{true: " and no prune", false: ""}[kind == TwinPrune], firstN(missing, 3), firstN(extra, 3))
	}
	bought := func(r *nightResult) []string {
		var qs []string
		for _, q := range r.requests {
			if q.credit > 0 {
				qs = append(qs, q.query)
			}
		}
		slices.Sort(qs)
		return slices.Compact(qs)
	}
	if missing, extra := diff(bought(twin), bought(main)); len(missing)+len(extra) > 0 {
		add(inv, "bought other requests than the night run with one worker: only there %s; only here %s", firstN(missing, 3), firstN(extra, 3))
	}
	return out
}

// comparable reports whether a night's outcome should not depend on
// timing: its run is done, no visit was skipped for budget, and no
// process was killed while faults were drawn (a killed request's retry
// draws another fate).
func (r *nightResult) comparable(s *Scenario) bool {
	if len(r.runs) == 0 || r.runs[len(r.runs)-1].state != "done" {
		return false
	}
	for _, t := range r.tasks {
		if t.outcome == "skipped_budget" {
			return false
		}
	}
	faults := s.World.ErrorRate > 0 || s.World.TruncateRate > 0 || s.World.HangPerMille > 0
	for _, e := range r.exits {
		if e.signaled != "" && faults {
			return false
		}
	}
	return true
}

// tails are the processes' last lines of output, for a violation that
// depends on how they ran.
func (r *nightResult) tails() string {
	var b strings.Builder
	for _, e := range r.exits {
		fmt.Fprintf(&b, "\n    [%s exited %d%s]\n%s", strings.Join(e.args, " "), e.code, map[bool]string{true: " by " + e.signaled}[e.signaled != ""], e.tail)
	}
	return b.String()
}

// describe says how the night ran, for a violation's detail.
func (r *nightResult) describe() string {
	var ex []string
	for _, e := range r.exits {
		s := fmt.Sprint(e.code)
		if e.signaled != "" {
			s = e.signaled
		}
		ex = append(ex, s)
	}
	workers := fmt.Sprint(r.workers)
	if r.workers == 0 {
		workers = "default"
	}
	return fmt.Sprintf("%s workers, processes ending %s", workers, strings.Join(ex, ","))
}

// diff is what want has and got lacks (missing), and the reverse.
func diff(want, got []string) (missing, extra []string) {
	w, g := map[string]int{}, map[string]int{}
	for _, x := range want {
		w[x]++
	}
	for _, x := range got {
		g[x]++
	}
	for _, x := range sortedKeys(w) {
		if g[x] < w[x] {
			missing = append(missing, x)
		}
	}
	for _, x := range sortedKeys(g) {
		if w[x] < g[x] {
			extra = append(extra, x)
		}
	}
	return missing, extra
}

func firstN(xs []string, n int) string {
	if len(xs) == 0 {
		return "none"
	}
	if len(xs) <= n {
		return strings.Join(xs, "; ")
	}
	return strings.Join(xs[:n], "; ") + fmt.Sprintf("; and %d more", len(xs)-n)
}

func sortedItems(m map[item]reached) []item {
	its := slices.Collect(maps.Keys(m))
	slices.SortFunc(its, func(a, b item) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.key, b.key)) })
	return its
}

func since(last map[item]int64, it item) string {
	if d, ok := last[it]; ok {
		return fmt.Sprintf("night %d", d)
	}
	return "never"
}
