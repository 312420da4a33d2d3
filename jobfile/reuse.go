package jobfile

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sources"
)

// ResumeWithinDefault is how long after its last activity an interrupted
// run is still continued by `crawler run JOB` (job-file resume_within).
// Shorter than a day, so last night's dead run does not swallow tonight's.
const ResumeWithinDefault = 12 * time.Hour

// FullWalkEveryDefault: a stop_at_seen list is walked whole when its last
// full walk was followed by 6 incremental ones.
const FullWalkEveryDefault = 7

// Reuse is the job file's reuse section.
type Reuse struct {
	// RefreshAfter is the job-wide refresh_after window (0: always fetch).
	RefreshAfter Duration `yaml:"refresh_after" json:"refresh_after,omitempty"`
	// Seeds overrides the window per seed list, keyed like
	// "shortvideo.profiles" (the key under seeds).
	Seeds map[string]Duration `yaml:"seeds" json:"seeds,omitempty"`
	// FullWalkEvery: a stop_at_seen list, or a content list whose walks
	// stop where their counter's rise is explained, whose last full walk
	// was followed by FullWalkEvery-1 walks cut short is walked whole (1:
	// always).
	FullWalkEvery int `yaml:"full_walk_every" json:"full_walk_every"`
	// FullWalkAfter: a stop_at_seen list whose last full walk is older is
	// walked whole (0: no age limit).
	FullWalkAfter Duration `yaml:"full_walk_after" json:"full_walk_after,omitempty"`
	// UpstreamCache lets the upstream answer from its own cache when its
	// answer is at most this old (the real service's cache_max_age: 1d,
	// 3d, 7d, 14d or 30d), on the endpoints that have one (profiles,
	// transcripts); such answers cost 0 credits. "": always fresh.
	UpstreamCache string `yaml:"upstream_cache" json:"upstream_cache,omitempty"`

	// Adaptive spends each run's limits.max_credits where the data
	// changes (docs/reuse.md): profiles and newest-first lists
	// seen by earlier runs are revisited by a schedule made from their
	// estimated change rates (package revisit), in place of refresh_after
	// and full_walk_every for those kinds; stop_at_seen applies to every
	// such list.
	Adaptive bool `yaml:"adaptive" json:"adaptive,omitempty"`
	// MaxAge: an adaptive run visits an item last visited longer ago,
	// whatever its expected yield. Default MaxAgeDefault.
	MaxAge Duration `yaml:"max_age" json:"max_age,omitempty"`
	// Importance weighs the yield of the items of a seed list (keyed like
	// Seeds: "shortvideo.profiles"), and of the lists of its accounts, in
	// the adaptive schedule; default 1.
	Importance map[string]float64 `yaml:"importance" json:"importance,omitempty"`
	// MinYield: an adaptive run spends nothing on a visit whose expected
	// yield (new entries, counter changes) per credit is below it, unless
	// max_age forces it. Default MinYieldDefault.
	MinYield *float64 `yaml:"min_yield" json:"min_yield,omitempty"`
	// CounterWeight is what a profile's graph counters moving (its
	// follower or following count) is worth in the adaptive schedule, in
	// new list entries. Default CounterWeightDefault.
	CounterWeight *float64 `yaml:"counter_weight" json:"counter_weight,omitempty"`
}

// CounterWeightDefault is reuse.counter_weight's default: a counter that
// moved is worth two new entries (bench workload 16 weighs it: 1 leaves
// the counters stale, 3 and more buy them at the lists' expense).
const CounterWeightDefault = 2.0

// MaxAgeDefault is reuse.max_age's default: a month.
const MaxAgeDefault = Duration(30 * 24 * time.Hour)

// MinYieldDefault is reuse.min_yield's default: no floor, the night's
// budget is spent while a visit is expected to find anything (a floor
// leaves credits idle that would capture something; bench workload 16).
const MinYieldDefault = 0.0

// UpstreamCacheAges are the ages the real service's cache_max_age takes.
var UpstreamCacheAges = []string{"1d", "3d", "7d", "14d", "30d"}

func (r *Reuse) applyDefaults(j *Job) {
	if !j.has("reuse.full_walk_every") {
		r.FullWalkEvery = FullWalkEveryDefault
	}
	j.API.CacheMaxAge = r.UpstreamCache
	if !j.has("reuse.max_age") {
		r.MaxAge = MaxAgeDefault
	}
	if r.MinYield == nil {
		v := MinYieldDefault
		r.MinYield = &v
	}
}

func (j *Job) validateReuse() Errors {
	var errs Errors
	add := func(key, format string, args ...any) {
		errs = append(errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if c := j.Reuse.UpstreamCache; c != "" {
		if !contains(UpstreamCacheAges, c) {
			add("reuse.upstream_cache", "%q is not an age the upstream's cache takes: %s", c, strings.Join(UpstreamCacheAges, ", "))
		} else if !j.API.HasCache() {
			add("reuse.upstream_cache", "the %s preset's service has no cache to reuse (the real service's, preset scrapecreators, has)", cmp.Or(j.API.Preset, sources.PresetContract))
		}
	}
	errs = append(errs, j.validateAdaptive()...)
	if r := j.Reuse.FullWalkEvery; r < 1 || r > math.MaxInt32 {
		add("reuse.full_walk_every", "must be between 1 and %d, got %d (1: every walk is full)", math.MaxInt32, r)
	}
	var names []string
	for name := range j.Reuse.Seeds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var l *kinds.SeedList
		for _, s := range kinds.SeedLists() {
			if s.Key == "seeds."+name {
				l = s
			}
		}
		switch {
		case l == nil:
			add("reuse.seeds."+name, "names no seed list (e.g. shortvideo.profiles)")
		case l.Kind().Fresh == nil:
			add("reuse.seeds."+name, "%s seeds are lists or rankings, which refresh_after does not skip (use stop_at_seen on their edge)", name)
		}
	}
	stopAtSeen, refresh, changed := kinds.StopAtSeenKeys(), kinds.RefreshKeys(), kinds.ChangeKeys()
	for name, e := range j.Expand.Edges() {
		if *e == nil {
			continue
		}
		if (*e).StopAtSeen && !contains(stopAtSeen, name) {
			add("expand."+name+".stop_at_seen", "applies only to lists returned newest first: %s", strings.Join(stopAtSeen, ", "))
		}
		content := contains(changed, name)
		if j.has("expand."+name+".changed_only") && !content {
			add("expand."+name+".changed_only", "applies only to content lists whose parent page carries their counter: %s", strings.Join(changed, ", "))
		}
		if name == "reel_comments" && cmp.Or(j.API.Preset, sources.PresetContract) == sources.PresetContract {
			// The contract's reels carry no comment count: their comments
			// are bought every time.
			for _, k := range []string{"changed_only", "refresh_after"} {
				if j.has("expand.reel_comments." + k) {
					add("expand.reel_comments."+k, "the contract's reels carry no comment count to decide on: their comments are bought every time (the scrapecreators preset's reels carry one)")
				}
			}
			continue
		}
		switch {
		case !j.has("expand." + name + ".refresh_after"):
		case content && !(*e).Changed():
			add("expand."+name+".refresh_after", "is the longest a list goes unwalked while its counter stays the same: with changed_only false every walk buys the list, so it does nothing")
		case !content && !contains(refresh, name):
			add("expand."+name+".refresh_after", "applies only to edges to an entity fetched whole (%s) and to content lists (%s); a list uses stop_at_seen",
				strings.Join(refresh, ", "), strings.Join(changed, ", "))
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// validateAdaptive checks the adaptive revisits' keys: they need a budget
// to spend, and name real seed lists.
func (j *Job) validateAdaptive() Errors {
	var errs Errors
	add := func(key, format string, args ...any) {
		errs = append(errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	r := &j.Reuse
	if !r.Adaptive {
		for _, k := range []string{"reuse.max_age", "reuse.importance", "reuse.min_yield", "reuse.counter_weight"} {
			if j.has(k) {
				add(k, "applies only with reuse.adaptive: true")
			}
		}
		return errs
	}
	if j.Limits.MaxCredits == nil || *j.Limits.MaxCredits <= 0 {
		add("reuse.adaptive", "needs a credit budget for the night to spend: set limits.max_credits")
	}
	if r.MaxAge <= 0 {
		add("reuse.max_age", "must be positive, got %s (the longest an item may go unvisited)", r.MaxAge)
	}
	if y := *r.MinYield; y < 0 || math.IsNaN(y) || math.IsInf(y, 0) {
		add("reuse.min_yield", "must be a number >= 0 (expected new entries or counter changes per credit), got %v", y)
	}
	if w := r.CounterWeight; w != nil && (!(*w > 0) || math.IsInf(*w, 0) || *w > 1e6) {
		add("reuse.counter_weight", "must be a weight above 0 and at most 1e6 (new entries a counter change is worth), got %v", *w)
	}
	var names []string
	for name := range r.Importance {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		found := false
		for _, s := range kinds.SeedLists() {
			found = found || s.Key == "seeds."+name
		}
		if w := r.Importance[name]; !found {
			add("reuse.importance."+name, "names no seed list (e.g. shortvideo.profiles)")
		} else if w <= 0 || math.IsNaN(w) || math.IsInf(w, 0) || w > 1e6 {
			add("reuse.importance."+name, "must be a weight above 0 and at most 1e6, got %v", w)
		}
	}
	return errs
}
