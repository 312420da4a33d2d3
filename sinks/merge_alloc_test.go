package sinks_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/sinks"
)

// A committer's group (32 follower pages of 50 users, merged and queued)
// allocates little beyond the statements' arrays: with thousands of
// requests in flight the crawler's heap sits above its soft limit, the
// collector runs back to back, and its work follows what is allocated
// (BENCHMARKS.md workload 21). Merge sizes each table once rather than
// doubling, and dedupe sorts indices rather than copies of the rows. The
// least of five rounds is read, so another goroutine's allocations do
// not count.
func TestGroupAllocatesLittle(t *testing.T) {
	var pages []*sinks.Batch
	for p := range 32 {
		var b sinks.Batch
		for i := range 50 {
			// Keys out of order across pages, as a group's are.
			id := fmt.Sprintf("u%02d_%02d", i, p)
			sinks.Add(&b, sinks.SVUser{UniqueID: id, Nickname: ptr("n"), Raw: []byte(`{}`)})
		}
		pages = append(pages, &b)
	}
	perRow := uint64(1 << 62)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var batch pgx.Batch
		sinks.Queue(&batch, 1, sinks.Merge(pages...))
		runtime.ReadMemStats(&after)
		perRow = min(perRow, (after.TotalAlloc-before.TotalAlloc)/1600)
	}
	// The rows once (96 bytes each) in the merge, once deduplicated, their
	// keys and order (20 bytes) and the statement's arrays: 337 bytes a
	// row (445 under -race); 626 when the merge grew by doubling and the sort
	// moved copies.
	if perRow > 500 {
		t.Errorf("a group's merge and statements allocate %d bytes a row, want at most 500", perRow)
	}
	t.Logf("%d bytes a row", perRow)
}
