package sinks_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/sinks"
)

// A committer's group of follower pages (32 pages of 50 entries, each
// entry's raw JSON 600 bytes) merged and queued: every statement's
// parameters stay within 32 KB, so the buffer pgx encodes them
// into stays among Go's small objects (with 1,000-row statements, about
// 600 KB a statement, the crawler's CPU per page doubled at thousands of
// requests in flight: BENCHMARKS.md workload 21), and every row is
// written once. A row larger than the bound still goes, alone.
func TestMergedGroupStatementsStaySmall(t *testing.T) {
	t.Parallel()
	const smallObject = 32 << 10 // Go's largest small object
	raw := []byte(`{"user":"` + strings.Repeat("x", 588) + `"}`)
	var pages []*sinks.Batch
	for p := range 32 {
		var b sinks.Batch
		for i := range 50 {
			id := fmt.Sprintf("f%02d_%02d", p, i)
			sinks.Add(&b, sinks.SVUser{UniqueID: id, Nickname: ptr("Nick " + id), SecUID: ptr("MS4wLjABAAAA" + id), Raw: raw})
			sinks.Add(&b, sinks.SVFollow{Follower: id, Followee: fmt.Sprint("owner", p), Raw: raw})
		}
		pages = append(pages, &b)
	}
	var batch pgx.Batch
	labels := sinks.Queue(&batch, 1, sinks.Merge(pages...))
	rows := map[string]int{}
	for i, q := range batch.QueuedQueries {
		n, size := paramBytes(q.Arguments)
		rows[labels[i]] += n
		if size > smallObject {
			t.Errorf("%s: statement %d carries %d bytes of parameters (%d rows), over %d", labels[i], i, size, n, smallObject)
		}
	}
	if rows["write shortvideo.users"] != 1600 || rows["write shortvideo.follows"] != 1600 {
		t.Errorf("rows written by table: %v, want 1600 users and 1600 follows", rows)
	}

	var big sinks.Batch
	huge := []byte(`"` + strings.Repeat("y", 64<<10) + `"`)
	sinks.Add(&big, sinks.SVUser{UniqueID: "a", Raw: raw}, sinks.SVUser{UniqueID: "b", Raw: huge}, sinks.SVUser{UniqueID: "c", Raw: raw})
	batch = pgx.Batch{}
	if labels := sinks.Queue(&batch, 1, &big); len(labels) != 3 {
		t.Errorf("a row over the bound between two small ones: %d statements, want 3 (one row each)", len(labels))
	}
}

// paramBytes are the rows of a statement's arrays and about the bytes pgx
// encodes for them: the lengths of its strings and byte slices.
func paramBytes(args []any) (rows, size int) {
	for _, a := range args {
		v := reflect.ValueOf(a)
		if v.Kind() != reflect.Slice || v.Type().Elem().Kind() == reflect.Uint8 {
			continue
		}
		rows = v.Len()
		for i := range v.Len() {
			e := v.Index(i)
			for e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
				if e.IsNil() {
					break
				}
				e = e.Elem()
			}
			size += 4
			if e.Kind() == reflect.String || (e.Kind() == reflect.Slice && e.Type().Elem().Kind() == reflect.Uint8) {
				size += e.Len()
			}
		}
	}
	return rows, size
}
