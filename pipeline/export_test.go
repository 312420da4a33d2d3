package pipeline

import "github.com/socialcrawl/crawler/kinds"

// BoundAllows says whether a task of kind parent may create one of kind
// child (one level deeper when hop) under the credit bound's rules.
func BoundAllows(parent, child string, hop bool) bool {
	for _, r := range kinds.BoundEdges(parent) {
		if r.Child == child && r.Hop == hop {
			return true
		}
	}
	return false
}
