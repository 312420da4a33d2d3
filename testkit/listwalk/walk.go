// Package listwalk walks follower lists through one sources.Client, each
// list page after page in a goroutine of its own, as the runner's tasks
// do, with no database: the client's adaptive limit alone decides how many
// requests are in flight. The benchmark workloads (testkit/bench) and the
// load driver (tools/benchload) measure the client and its controllers
// with it where the runner is not the question.
package listwalk

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// Walker walks lists through its client.
type Walker struct {
	Client *sources.Client
	Pages  atomic.Int64 // pages answered
	Errs   atomic.Int64 // calls that failed (retries spent, or refused)
	mu     sync.Mutex
	trace  []Point // once a second
}

// Point is the client's limit and slots held at a moment.
type Point struct {
	At       time.Time
	Limit    int
	InFlight int
	Last     concurrency.Move
}

// New builds the walker's client against baseURL with key, with no
// settings but retries enough to ride out 429s; mod adjusts its config.
func New(baseURL, key string, mod func(*sources.Config)) (*Walker, error) {
	cfg := sources.Config{Options: sources.DefaultOptions(), APIKey: sources.Secret(key)}
	cfg.BaseURL, cfg.MaxRetries = baseURL, 20
	if mod != nil {
		mod(&cfg)
	}
	c, err := sources.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Walker{Client: c}, nil
}

// SecUID is the secUid the sandbox gives handle.
func SecUID(handle string) string {
	return "MS4wLjABAAAA" + base64.RawURLEncoding.EncodeToString([]byte(handle))
}

// Walk walks lists lists, of the sandbox's accounts prefix0000_f1000000_g0
// and on (20,000 pages each), until ctx ends, and samples the limit once a
// second.
func (w *Walker) Walk(ctx context.Context, lists int, prefix string) {
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			st := w.Client.Concurrency()
			w.mu.Lock()
			w.trace = append(w.trace, Point{At: time.Now(), Limit: st.Limit, InFlight: st.InFlight, Last: st.Last})
			w.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	for i := range lists {
		wg.Go(func() {
			secUID := SecUID(fmt.Sprintf("%s%04d_f1000000_g0", prefix, i))
			cursor := ""
			for ctx.Err() == nil {
				p, err := sources.Do(ctx, w.Client, nil, endpoints.SVFollowersCall(secUID, cursor))
				if err != nil {
					if ctx.Err() == nil {
						w.Errs.Add(1)
					}
					continue
				}
				w.Pages.Add(1)
				if cursor = p.Cursor; cursor == "" {
					return
				}
			}
		})
	}
	wg.Wait()
}

// Limits is the least and most limit sampled in [from, to), and the mean
// of the slots held.
func (w *Walker) Limits(from, to time.Time) (lo, hi int, inFlight float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lo, n := 1<<30, 0
	for _, p := range w.trace {
		if p.At.Before(from) || !p.At.Before(to) {
			continue
		}
		lo, hi = min(lo, p.Limit), max(hi, p.Limit)
		inFlight += float64(p.InFlight)
		n++
	}
	if n == 0 {
		return 0, 0, 0
	}
	return lo, hi, inFlight / float64(n)
}
