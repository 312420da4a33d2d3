package pipeline

import (
	"testing"

	"github.com/socialcrawl/crawler/internal/db"
	// crawler prune's statements (retention.sql) are bound by package
	// retention, which the pipeline does not import.
	_ "github.com/socialcrawl/crawler/retention"
)

// TestEveryQueryIsBound: the pipeline and the sinks it imports bind every
// query of internal/db/queries at init (a missing or mismatched one panics
// there), and none is left over as dead text.
func TestEveryQueryIsBound(t *testing.T) {
	t.Parallel()
	if left := db.Unprepared(); len(left) > 0 {
		t.Errorf("queries no package binds: %v", left)
	}
}
