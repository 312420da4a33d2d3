package frontier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// bigPage is a page of n users whose rows' arrays exceed flushAt, so that
// sendPipelined writes its statement to the server before encoding the
// next: the server runs the group's first statements while the rest is
// still to come.
func bigPage(prefix string, n int) *sinks.Batch {
	var b sinks.Batch
	pad := strings.Repeat("x", 100)
	for i := range n {
		sinks.Add(&b, sinks.SVUser{UniqueID: fmt.Sprintf("%s%04d", prefix, i), Raw: fmt.Appendf(nil, `{"pad":%q}`, pad)})
	}
	return &b
}

// A group whose sending fails midway, after its BEGIN and a table's rows
// were written to the server and run (an argument that cannot be
// encoded), commits nothing: no COMMIT was sent, and the connection is
// closed rather than left in the group's transaction.
func TestPipelinedGroupFailingMidwayCommitsNothing(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	runID := testRun(t, pool, nil)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var batch pgx.Batch
	batch.Queue(beginPage)
	labels := append([]string{"begin"}, sinks.Queue(&batch, runID, bigPage("u", 300))...)
	batch.Queue("SELECT $1::int", make(chan int)) // pgx cannot encode a channel
	batch.Queue(commitPage)
	labels = append(labels, "bad", "commit")
	br := sendPipelined(ctx, conn.Conn(), &batch)
	err = sinks.Results(br, labels)
	_ = br.Close()
	if err == nil || !strings.Contains(err.Error(), "encode") {
		t.Errorf("error %v, want the failure to encode", err)
	}
	if !conn.Conn().IsClosed() {
		t.Errorf("connection left open after a group failed midway")
	}
	var users int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM shortvideo.users`).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users != 0 {
		t.Errorf("%d users committed, want none", users)
	}
}

// A group whose rows go to the server in parts, one page's lease lost:
// the advance fails at the server while the rest of the group is still
// being written, and nothing of the group is committed; sent page by
// page, the others commit, whole.
func TestPipelinedGroupWithALostLeaseCommitsNothing(t *testing.T) {
	t.Parallel()
	pool, runID, c, gs := threePagesOneLeaseLost(t, 2, func(i int) (*sinks.Batch, int) {
		return bigPage(fmt.Sprintf("p%d_", i), 200), 200
	})
	ctx := context.Background()
	group := c.take()
	if c.sendTogether(ctx, group) {
		t.Fatal("a group with a lost lease committed")
	}
	count := func() (users, pages int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM shortvideo.users), (SELECT sum(pages) FROM crawl.tasks WHERE run_id = $1)`, runID).Scan(&users, &pages); err != nil {
			t.Fatal(err)
		}
		return users, pages
	}
	if users, pages := count(); users != 0 || pages != 0 {
		t.Fatalf("after the failed group: %d users, %d pages; want none", users, pages)
	}
	if rest := c.sendGroup(ctx, group); len(rest) != 0 {
		t.Fatalf("%d pages to send again, want none", len(rest))
	}
	for i, g := range gs {
		if err := g.Wait(ctx); (err != nil) != (i == 2) || (i == 2 && !errors.Is(err, ErrLeaseLost)) {
			t.Errorf("page %d: %v", i, err)
		}
	}
	if users, pages := count(); users != 400 || pages != 2 {
		t.Errorf("%d users, %d pages; want 400 and 2 (the pages whose lease holds)", users, pages)
	}
}
