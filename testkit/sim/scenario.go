package sim

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Profile sizes the scenarios a seed generates: the same seed under
// another profile is another scenario, so a replay names both.
type Profile struct {
	Name string
	// Nights is the range of nights a scenario runs (world days 0..n-1).
	MinNights, MaxNights int
	// MaxSeeds bounds the profiles a job seeds.
	MaxSeeds int
	// MaxRequests bounds what a night would send without reuse: a job
	// reaching further is made smaller (depth, page limits, seeds).
	MaxRequests int64
	// Rate allows the sandbox's 429 bucket (a night then waits out
	// Retry-After pauses of a second or more).
	Rate bool
	// Plain leaves out the blind spots (gen.blindSpots): a seed is the
	// scenario it was before issue 33 added them, to replay an older
	// finding.
	Plain bool
}

// Profiles by name: "short" is the one make test runs (a few seconds a
// seed), "full" the one make simulate runs.
var Profiles = map[string]Profile{
	"short": {Name: "short", MinNights: 3, MaxNights: 3, MaxSeeds: 3, MaxRequests: 120},
	"full":  {Name: "full", MinNights: 3, MaxNights: 7, MaxSeeds: 6, MaxRequests: 500, Rate: true},
}

// Scenario is everything a seed decides: the world, the job and what
// happens each night. Timing is the one thing it does not decide.
type Scenario struct {
	Seed    int64
	Profile string
	World   World
	Job     Job
	Nights  []Night
	// RealKills: a process killed with kill -9 is left to the crawler's
	// own timing (its leases lapse after lease_timeout, its credit hold
	// counts as dead once it has not beaten for the hold's dead age, and a
	// budget stop waits for them); else the harness expires its leases and
	// ages its hold at once (crew.expire).
	RealKills bool
}

// World is the sandbox every night of the scenario serves, at world day
// = the night's number.
type World struct {
	Preset   string // sandbox.PresetContract or sandbox.PresetScrapeCreators
	Churn    string // how accounts change: one of churnWorlds
	PageSize int
	// Prices are the endpoints (by task kind, e.g. "shortvideo.profile")
	// that cost more than one credit; the job declares them.
	Prices map[string]int64
	// RealFields makes the contract preset's bodies say what they
	// charged (credits_charged), as the real service's envelopes do.
	RealFields   bool
	ErrorRate    float64
	TruncateRate float64
	JitterMicros int64
	FaultSeed    int64
	Rate         float64 // requests/s per key; 0: no bucket
	Burst        int
	// BillAbandoned: the upstream bills a request its client gave up on
	// (sandbox.Faults.BillAbandoned); the crawler takes it as not billed.
	BillAbandoned bool
	// HangPerMille requests in 1000 are held until the client's
	// api.timeout gives up on them (hangs of HangMillis); 0: none.
	HangPerMille int
	HangMillis   int
}

// Job is the job file's choices (jobyaml.go writes it).
type Job struct {
	Workers int // limits.workers; 0: unset, the adaptive concurrency
	// TimeoutMillis is api.timeout (0: 20 s) and LeaseSeconds
	// limits.lease_timeout (0: 60 s).
	TimeoutMillis, LeaseSeconds int
	MaxPages                    int
	MaxDepth                    int
	MaxRetries                  int
	Budget                      int64 // limits.max_credits; 0: none
	Followers                   *List // expand.followers; nil: off
	Following                   *List
	// FollowerProfiles turns on expand.follower_profiles.
	FollowerProfiles bool
	Comments         *List // expand.comments (the post seeds' lists)
	IncludeReplies   bool
	Archive          bool
	// The real service's content edges (scrapecreators preset only; nil:
	// off): a short-video creator's videos, each video's comments (one
	// hop deeper) and their replies, its transcript; a photo-sharing
	// profile's posts, reels and highlights.
	Videos, VideoComments, CommentReplies *List
	VideoTranscripts                      *Entity
	Posts, Reels                          *List
	Highlights                            bool
	Reuse                                 Reuse
	Seeds                                 []Seed
	// DeclaredPrices are the api.endpoints credits the job declares.
	DeclaredPrices map[string]int64
}

// List is an edge to a list: its page limit and stop_at_seen.
type List struct {
	MaxPages   int
	StopAtSeen bool
}

func (l *List) String() string {
	if l == nil {
		return "off"
	}
	if l.StopAtSeen {
		return fmt.Sprintf("max_pages %d stop_at_seen", l.MaxPages)
	}
	return fmt.Sprintf("max_pages %d", l.MaxPages)
}

// Entity is an edge to an entity fetched whole: its refresh_after.
type Entity struct {
	RefreshAfterDays int // 0: reuse.refresh_after's
}

func (e *Entity) String() string {
	if e == nil {
		return "off"
	}
	if e.RefreshAfterDays == 0 {
		return "on"
	}
	return fmt.Sprintf("refresh_after %dd", e.RefreshAfterDays)
}

// lists are the job's list edges with page limits (shrink halves them).
func (j *Job) lists() []*List {
	return []*List{j.Followers, j.Following, j.Comments, j.Videos, j.VideoComments, j.CommentReplies, j.Posts, j.Reels}
}

// Reuse is the job's reuse section.
type Reuse struct {
	RefreshAfterHours int // reuse.refresh_after; 0: none
	FullWalkEvery     int // 0: the default
	Adaptive          bool
	MaxAgeDays        int // adaptive: reuse.max_age; 0: the default (30 days)
	MinYield          float64
	CounterWeight     float64
	UpstreamCache     string // "": none
}

// Seed is one value of a seed list.
type Seed struct {
	Key    string // the seed list, as under seeds: ("shortvideo.profiles")
	Value  string
	InFile bool // listed in the list's seed file (X_file) rather than inline
}

// Night is what happens in one night.
type Night struct {
	Day int64
	// Workers is limits.workers tonight; 0: unset (the adaptive
	// concurrency).
	Workers int
	// Prune runs crawler prune before the night; nil: none.
	Prune *Prune
	// Procs are the crawler processes started tonight, in order.
	Procs []Proc
	// Twin runs the night a second time on a copy of the database taken
	// before it (and before the prune), with one worker, one process and
	// no kill, and compares: TwinTiming (same tasks and depths whatever
	// the timing), TwinPrune (the prune changes nothing the night buys);
	// "": none.
	Twin string
}

// Twin kinds.
const (
	TwinTiming = "timing"
	TwinPrune  = "prune"
)

// Prune is a crawler prune.
type Prune struct {
	KeepRuns  int
	Snapshots bool
}

// Proc is a crawler run started at the StartAt-th request the night's
// upstream sees (0: at once), sent Signal ("KILL", "TERM"; "": none) at
// its KillAt-th request (counted from the night's first).
type Proc struct {
	StartAt int
	KillAt  int
	Signal  string
}

// String is the scenario in a few lines, for -v and failure reports.
func (s Scenario) String() string {
	var b strings.Builder
	w, j := s.World, s.Job
	fmt.Fprintf(&b, "seed %d (profile %s): preset %s, churn %s, page size %d, prices %v (declared %v), real fields %v, faults err %.2f trunc %.2f jitter %dus, rate %.0f/%d\n",
		s.Seed, s.Profile, w.Preset, w.Churn, w.PageSize, w.Prices, j.DeclaredPrices, w.RealFields, w.ErrorRate, w.TruncateRate, w.JitterMicros, w.Rate, w.Burst)
	fmt.Fprintf(&b, "job: max_pages %d, max_depth %d, retries %d, budget %d, followers %v, following %v, follower_profiles %v, comments %v, replies %v, archive %v\n",
		j.MaxPages, j.MaxDepth, j.MaxRetries, j.Budget, j.Followers, j.Following, j.FollowerProfiles, j.Comments, j.IncludeReplies, j.Archive)
	if j.hasContent() {
		fmt.Fprintf(&b, "content: videos %v, video_comments %v, comment_replies %v, video_transcripts %v, posts %v, reels %v, highlights %v\n",
			j.Videos, j.VideoComments, j.CommentReplies, j.VideoTranscripts, j.Posts, j.Reels, j.Highlights)
	}
	fmt.Fprintf(&b, "reuse: %+v\n", j.Reuse)
	if w.BillAbandoned || w.HangPerMille > 0 || s.RealKills || j.TimeoutMillis > 0 {
		fmt.Fprintf(&b, "bill abandoned %v, hangs %d/1000 of %d ms, api.timeout %d ms, lease_timeout %d s, real kill timing %v\n",
			w.BillAbandoned, w.HangPerMille, w.HangMillis, j.TimeoutMillis, j.LeaseSeconds, s.RealKills)
	}
	var seeds []string
	for _, sd := range j.Seeds {
		f := ""
		if sd.InFile {
			f = " (file)"
		}
		seeds = append(seeds, sd.Key+"="+sd.Value+f)
	}
	fmt.Fprintf(&b, "seeds: %s\n", strings.Join(seeds, ", "))
	for _, n := range s.Nights {
		if n.Workers == 0 {
			fmt.Fprintf(&b, "night %d: workers default", n.Day)
		} else {
			fmt.Fprintf(&b, "night %d: workers %d", n.Day, n.Workers)
		}
		if n.Prune != nil {
			fmt.Fprintf(&b, ", prune --keep-runs %d snapshots %v", n.Prune.KeepRuns, n.Prune.Snapshots)
		}
		for i, p := range n.Procs {
			fmt.Fprintf(&b, ", proc %d at %d", i+1, p.StartAt)
			if p.Signal != "" {
				fmt.Fprintf(&b, " %s at %d", p.Signal, p.KillAt)
			}
		}
		if n.Twin != "" {
			fmt.Fprintf(&b, ", twin %s", n.Twin)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// gen draws a scenario's choices from the seed.
type gen struct{ r *rand.Rand }

func (g gen) chance(p float64) bool  { return g.r.Float64() < p }
func (g gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }
func (g gen) pick(xs ...string) string {
	return xs[g.r.IntN(len(xs))]
}

// Generate is the scenario of seed under profile p: a pure function of
// both.
func Generate(seed int64, p Profile) (*Scenario, error) {
	g := gen{rand.New(rand.NewPCG(uint64(seed), 0x5eed_5eed))}
	s := &Scenario{Seed: seed, Profile: p.Name}
	s.World = g.world(p)
	// The churn world from a stream of its own: adding a world changes no
	// other choice of a seed's scenario.
	s.World.Churn = churnWorlds[rand.New(rand.NewPCG(uint64(seed), 0xc4a2_1d)).IntN(len(churnWorlds))]
	s.Job = g.job(p, s.World)
	// The content edges from a stream of their own too: a seed whose job
	// has none is the scenario it was before they were added.
	gen{rand.New(rand.NewPCG(uint64(seed), 0xc0_47e4))}.content(&s.Job, s.World)
	credits, requests, err := shrink(s, p.MaxRequests)
	if err != nil {
		return nil, err
	}
	// The budget: a share of what a whole night would cost, required by
	// adaptive revisits.
	if s.Job.Reuse.Adaptive || g.chance(0.5) {
		s.Job.Budget = max(1, credits*int64(g.between(15, 130))/100)
	}
	s.Nights = g.nights(p, s.Job, requests)
	// What the simulator did not see before (issue 33), from a stream of
	// its own: a seed that draws none of it is the scenario it was.
	if !p.Plain {
		gen{rand.New(rand.NewPCG(uint64(seed), 0xb11d_5b07))}.blindSpots(s)
	}
	return s, nil
}

// blindSpots turns on, in some seeds, what the other choices never do:
// the default concurrency (no limits.workers), an upstream that bills
// the requests its client gave up on (with hangs that api.timeout gives
// up on, so that there are some), and the real kill timing.
func (g gen) blindSpots(s *Scenario) {
	if g.chance(0.3) {
		s.Job.Workers = 0
		for i := range s.Nights {
			if s.Nights[i].Twin != TwinPrune { // its night stays deterministic: one worker
				s.Nights[i].Workers = 0
			}
		}
	}
	if g.chance(0.3) {
		w := &s.World
		w.BillAbandoned = true
		w.JitterMicros = max(w.JitterMicros, int64(g.between(2_000, 30_000))) // requests in flight when a signal comes
		if g.chance(0.6) {
			w.HangPerMille, w.HangMillis = g.between(5, 30), 3_000
			s.Job.TimeoutMillis = 1_000
		}
	}
	killed := slices.ContainsFunc(s.Nights, func(n Night) bool {
		return slices.ContainsFunc(n.Procs, func(p Proc) bool { return p.Signal == "KILL" })
	})
	if killed && g.chance(0.4) {
		s.RealKills = true
		s.Job.LeaseSeconds = 8 // the night's wait for a dead process's leases
		s.Job.TimeoutMillis = cmp.Or(s.Job.TimeoutMillis, 5_000)
	}
}

// shrink makes the job smaller until a night without reuse sends at most
// max requests: max_depth 2 becomes 1, then page limits halve, then seeds
// go. It returns the night's estimate.
func shrink(s *Scenario, limit int64) (credits, requests int64, err error) {
	j, t := &s.Job, newTruth(s) // the world's truth does not change with the job
	for {
		credits, requests, err = t.estimateNight(limit)
		if err != nil || requests <= limit {
			return credits, requests, err
		}
		lists := j.lists()
		switch {
		case j.MaxDepth > 1:
			j.MaxDepth = 1
		case slices.ContainsFunc(lists, func(l *List) bool { return l != nil && l.MaxPages > 1 }):
			for _, l := range lists {
				if l != nil {
					l.MaxPages = max(1, l.MaxPages/2)
				}
			}
		case len(j.Seeds) > 1:
			j.Seeds = j.Seeds[:len(j.Seeds)-1]
		default:
			return credits, requests, nil // one seed, one page a list: as small as it gets
		}
	}
}

// churnWorlds are the sandbox's worlds of accounts changing day to day
// that the generator picks from (each with its ground truth).
var churnWorlds = []string{sandbox.ChurnHeavyTail, sandbox.ChurnBursts, sandbox.ChurnDrift}

func (g gen) world(p Profile) World {
	w := World{Preset: "contract", PageSize: g.between(3, 10), FaultSeed: g.r.Int64N(1 << 40)}
	if g.chance(0.5) {
		w.Preset = "scrapecreators"
	}
	if g.chance(0.4) {
		w.Prices = map[string]int64{}
		for _, k := range []string{"shortvideo.profile", "shortvideo.followers", "shortvideo.following", "photosocial.comments", "photosocial.profile"} {
			if g.chance(0.5) {
				w.Prices[k] = int64(g.between(2, 4))
			}
		}
		w.RealFields = g.chance(0.5)
	}
	if g.chance(0.5) {
		w.ErrorRate = float64(g.between(0, 10)) / 100
		w.TruncateRate = float64(g.between(0, 5)) / 100
	}
	if g.chance(0.5) {
		w.JitterMicros = int64(g.between(100, 3000))
	}
	if p.Rate && g.chance(0.1) {
		w.Rate, w.Burst = float64(g.between(100, 300)), g.between(5, 20)
	}
	return w
}

func (g gen) job(p Profile, w World) Job {
	j := Job{
		Workers:    g.between(1, 8),
		MaxPages:   g.between(1, 4),
		MaxDepth:   []int{0, 1, 1, 1, 2}[g.r.IntN(5)],
		MaxRetries: g.between(2, 5),
		Archive:    g.chance(0.3),
	}
	list := func(p float64) *List {
		if !g.chance(p) {
			return nil
		}
		return &List{MaxPages: g.between(1, 4)}
	}
	j.Followers, j.Following = list(0.9), list(0.6)
	j.FollowerProfiles = (j.Followers != nil || j.Following != nil) && g.chance(0.5)
	j.Seeds = g.seeds(p, w)
	if slices.ContainsFunc(j.Seeds, func(s Seed) bool { return s.Key == "photosocial.posts" }) {
		j.Comments = &List{MaxPages: g.between(1, 3)}
		j.IncludeReplies = w.Preset == "scrapecreators" && g.chance(0.5)
	}
	switch mode := g.r.IntN(10); {
	case mode < 3: // no reuse
	case mode < 6: // fixed windows
		j.Reuse.RefreshAfterHours = []int{20, 44, 68}[g.r.IntN(3)]
		j.Reuse.FullWalkEvery = g.between(1, 7)
		for _, l := range []*List{j.Followers, j.Following, j.Comments} {
			if l != nil {
				l.StopAtSeen = g.chance(0.8)
			}
		}
	default:
		j.Reuse.Adaptive = true
		if g.chance(0.7) {
			j.Reuse.MaxAgeDays = g.between(1, 4)
		}
		if g.chance(0.4) {
			j.Reuse.MinYield = []float64{0.1, 0.5, 2}[g.r.IntN(3)]
		}
		if g.chance(0.3) {
			j.Reuse.CounterWeight = []float64{0.5, 1, 3}[g.r.IntN(3)]
		}
	}
	if w.Preset == "scrapecreators" && g.chance(0.3) {
		j.Reuse.UpstreamCache = g.pick("1d", "3d", "7d")
	}
	if len(w.Prices) > 0 {
		j.DeclaredPrices = maps.Clone(w.Prices)
		if j.IncludeReplies {
			delete(j.DeclaredPrices, "photosocial.comments") // replies cost 15 whatever the price
		}
	}
	return j
}

// content turns on some of the real service's content edges, under the
// real preset only (the contract refuses them), with small page limits,
// as a user would: newest-first lists with stop_at_seen, a transcript
// not bought again for a year.
func (g gen) content(j *Job, w World) {
	if w.Preset != sandbox.PresetScrapeCreators || !g.chance(0.5) {
		return
	}
	list := func(p float64, pages int, newestFirst bool) *List {
		if !g.chance(p) {
			return nil
		}
		return &List{MaxPages: g.between(1, pages), StopAtSeen: newestFirst && g.chance(0.6)}
	}
	if slices.ContainsFunc(j.Seeds, func(s Seed) bool { return s.Key == "shortvideo.profiles" }) {
		if j.Videos = list(0.8, 2, true); j.Videos != nil {
			j.VideoComments = list(0.6, 2, false) // ranked, not newest first: no stop_at_seen
			if j.VideoComments != nil {
				j.CommentReplies = list(0.5, 1, false)
			}
			if g.chance(0.5) {
				j.VideoTranscripts = &Entity{}
				if g.chance(0.7) {
					j.VideoTranscripts.RefreshAfterDays = 365
				}
			}
		}
	}
	if slices.ContainsFunc(j.Seeds, func(s Seed) bool { return s.Key == "photosocial.profiles" }) {
		j.Posts, j.Reels = list(0.6, 2, true), list(0.4, 2, true)
		j.Highlights = g.chance(0.5)
	}
}

// hasContent reports whether any content edge is on.
func (j *Job) hasContent() bool {
	return j.Videos != nil || j.Posts != nil || j.Reels != nil || j.Highlights
}

func (g gen) seeds(p Profile, w World) []Seed {
	var out []Seed
	for _, k := range seedKinds {
		if k.presets != "" && k.presets != w.Preset {
			continue
		}
		for _, v := range k.values(g, p, w) {
			out = append(out, Seed{Key: k.key, Value: v, InFile: k.file && g.chance(0.3)})
		}
	}
	return out
}

// nights are what happens each night; requests is the estimate of a
// night without reuse (kills and second processes start within it).
func (g gen) nights(p Profile, j Job, requests int64) []Night {
	n := g.between(p.MinNights, p.MaxNights)
	nights := make([]Night, n)
	for d := range nights {
		nt := Night{Day: int64(d), Workers: j.Workers}
		if g.chance(0.3) {
			nt.Workers = g.between(1, 8)
		}
		if d >= 2 && g.chance(0.3) {
			nt.Prune = &Prune{KeepRuns: g.between(1, 2), Snapshots: g.chance(0.3)}
		}
		switch {
		case nt.Prune != nil && g.chance(0.7):
			// The prune's twin compares two deterministic nights: one
			// worker, one process, no kill.
			nt.Twin, nt.Workers = TwinPrune, 1
			nt.Procs = []Proc{{}}
		default:
			if d > 0 && g.chance(0.3) {
				nt.Twin = TwinTiming
				nt.Workers = max(2, nt.Workers)
			}
			nt.Procs = g.procs(int(max(4, requests)))
		}
		nights[d] = nt
	}
	return nights
}

// procs are a night's processes: one, sometimes a second joining it, and
// sometimes a kill of the first followed by a restart.
func (g gen) procs(size int) []Proc {
	ps := []Proc{{}}
	if g.chance(0.3) {
		ps = append(ps, Proc{StartAt: g.between(0, size/2)})
	}
	if g.chance(0.35) {
		ps[0].Signal = "KILL"
		if g.chance(0.2) {
			ps[0].Signal = "TERM"
		}
		ps[0].KillAt = g.between(1, size)
	}
	return ps
}
