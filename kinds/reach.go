package kinds

import (
	"fmt"
	"slices"
	"strings"
)

// Every expand key a job writes takes effect (issue 32, point 5): one
// whose edges can never be followed in the job, because no task of the
// kinds they lead from is ever made within limits.max_depth, does nothing
// and is refused. Which kinds a job makes is read from its seeds and the
// edge declarations (edges.go), as the run would make them.

// reached is the least depth at which the job makes tasks of each kind:
// its seeds' kinds at 0, then every edge it turns on, a hop one deeper,
// while within maxDepth.
func reached(j Job, seedKinds []string, maxDepth int) map[string]int {
	depth := map[string]int{}
	for _, k := range seedKinds {
		depth[k] = 0
	}
	for changed := true; changed; {
		changed = false
		for _, d := range edgeDecls {
			if !d.on(j) {
				continue
			}
			for _, from := range d.From {
				dep, ok := depth[from]
				if !ok {
					continue
				}
				if d.Hop {
					dep++
				}
				if dep > maxDepth {
					continue
				}
				if cur, ok := depth[d.To]; !ok || dep < cur {
					depth[d.To] = dep
					changed = true
				}
			}
		}
	}
	return depth
}

// IdleExpandKeys are the expand keys among written (the keys the file
// sets) that do nothing in job j, whose seeds start tasks of seedKinds,
// each with why. A key does something when one of its edges is followed
// from a kind the job makes, or when it is the page limit (Kind.Pages) of
// a kind the job makes from seeds or along an edge that does not set its
// own (edgeDecl.Pages).
func IdleExpandKeys(j Job, seedKinds []string, maxDepth int, written []string) map[string]string {
	depth := reached(j, seedKinds, maxDepth)
	used := map[string]bool{}
	for _, d := range edgeDecls {
		if !d.on(j) {
			continue
		}
		for _, from := range d.From {
			if dep, ok := depth[from]; ok && (!d.Hop || dep+1 <= maxDepth) {
				used[d.Key] = true
				if d.Pages == "" {
					used[named(d.To).Pages] = true
				}
			}
		}
	}
	for _, k := range seedKinds {
		used[Of(k).Pages] = true
	}
	out := map[string]string{}
	for _, key := range written {
		if used[key] {
			continue
		}
		var from []string
		for _, d := range edgeDecls {
			if d.Key == key {
				from = append(from, d.From...)
			}
		}
		for _, k := range registry {
			if k.Pages == key {
				from = append(from, k.Name)
			}
		}
		slices.Sort(from)
		from = slices.Compact(from)
		out[key] = fmt.Sprintf("does nothing in this job: no task it makes follows this edge or takes its page limit (it applies to %s tasks the seeds and edges make, within limits.max_depth %d); remove it, or add what leads there",
			strings.Join(from, " or "), maxDepth)
	}
	return out
}

// MaxPagesKeys are the expand keys whose max_pages bounds lists: the page
// limit of a list kind (Kind.Pages) or of the lists an edge makes
// (edgeDecl.Pages). On other keys, edges to an entity fetched whole, it
// would do nothing. Sorted, for messages.
func MaxPagesKeys() []string {
	var keys []string
	for _, k := range registry {
		if k.List && k.Pages != "" {
			keys = append(keys, k.Pages)
		}
	}
	for _, d := range edgeDecls {
		if d.Pages != "" {
			keys = append(keys, d.Pages)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// IsEdgeKey reports whether key turns an edge on (edges.go); the others
// (comments) only set options of lists other seeds and edges make.
func IsEdgeKey(key string) bool {
	return slices.ContainsFunc(edgeDecls, func(d *edgeDecl) bool { return d.Key == key })
}
