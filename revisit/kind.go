package revisit

// ItemKind is what a visit of an item observes.
type ItemKind int

const (
	// List is a list walked newest first until an entry already stored
	// (stop_at_seen): a visit captures every entry added since the last.
	List ItemKind = iota
	// Counter is an object whose counters are read by one call (a
	// profile): a visit sees whether they changed, not how often.
	Counter
)
