package main

import (
	"testing"

	"github.com/socialcrawl/crawler/internal/db"
)

// TestEveryQueryIsBound: the packages the binary links bind every query
// of internal/db/queries at init (a missing or mismatched one panics
// there), and none is left over as dead text. It lives here, above every
// layer, since the statements of crawler prune, export and events are
// bound by packages the runner does not import.
func TestEveryQueryIsBound(t *testing.T) {
	t.Parallel()
	if left := db.Unprepared(); len(left) > 0 {
		t.Errorf("queries no package binds: %v", left)
	}
}
