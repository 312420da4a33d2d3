package sim

import (
	"os"
	"sync"
	"testing"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// shortSeeds are the seeds make test simulates under the short profile,
// chosen so that together they combine every feature (see features):
// both dialects, prices, faults, replies, the upstream cache, seed files,
// depth 2, fixed windows and adaptive revisits, second processes, kill
// -9, SIGTERM, prunes and both twins, the real service's content edges
// (seed 22: videos, their comments with replies, transcripts), the default
// concurrency (22, 80, 141), the real kill timing (22), an upstream billing
// abandoned requests, with hangs (141).
var shortSeeds = []int64{22, 67, 80, 128, 141, 152}

// TestSimulateShort runs the short profile: a few seeds of three nights
// each, every invariant checked after every night. A violation names the
// command that replays its seed.
func TestSimulateShort(t *testing.T) {
	t.Parallel()
	env, err := NewEnv(t.Context(), pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	p := Profiles["short"]
	// Three seeds at once, in shortSeeds' order (seed 22, whose kill -9 is
	// left to the crawler's own timing, waits out a dead process's hold
	// for 15 s: first). A seed's nights mostly wait on processes and
	// timers, so a third seed costs the two cores little.
	queue := make(chan int64, len(shortSeeds))
	for _, seed := range shortSeeds {
		queue <- seed
	}
	close(queue)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for seed := range queue {
				simulateSeed(t, env, seed, p)
			}
		})
	}
	wg.Wait()
}

// simulateSeed runs seed under p and reports its violations.
func simulateSeed(t *testing.T, env *Env, seed int64, p Profile) {
	res, err := env.Run(t.Context(), seed, p, Options{})
	if err != nil {
		t.Errorf("seed %d: %v\n  replay: %s", seed, err, Replay(seed, p.Name))
		return
	}
	for _, v := range res.Violations {
		t.Errorf("seed %d: %s", seed, v)
	}
	if len(res.Violations) > 0 {
		t.Logf("seed %d: %d violations\n%s  replay: %s", seed, len(res.Violations), res.Scenario, Replay(seed, p.Name))
	}
	t.Logf("seed %d: %d requests in %.1fs", seed, res.Answered, res.Elapsed.Seconds())
}

// TestShortSeedsCombineEveryFeature keeps shortSeeds honest: the features
// they combine (features in generate_test.go) cover every feature.
func TestShortSeedsCombineEveryFeature(t *testing.T) {
	t.Parallel()
	got := map[string]bool{}
	for _, seed := range shortSeeds {
		s, err := Generate(seed, Profiles["short"])
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range features(s) {
			got[f] = true
		}
	}
	for _, f := range []string{"contract", "scrapecreators", "prices", "faults", "adaptive", "fixed windows",
		"upstream cache", "replies", "seed file", "depth 2", "budget", "no budget", "kill", "term",
		"second process", "prune", "twin timing", "twin prune", "private", "growing",
		"videos", "video comments", "comment replies", "video transcripts", "profile content",
		"default concurrency", "bill abandoned", "hangs", "real kills"} {
		if !got[f] {
			t.Errorf("no seed of shortSeeds has %s", f)
		}
	}
}
