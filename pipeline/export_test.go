package pipeline

// BoundAllows says whether a task of kind parent may create one of kind
// child (one level deeper when hop) under the credit bound's rules.
func BoundAllows(parent, child string, hop bool) bool {
	for _, r := range boundEdges[parent] {
		if r.child == child && r.hop == hop {
			return true
		}
	}
	return false
}
