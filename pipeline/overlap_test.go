package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
)

// A list's next request leaves while its previous page's commit is read.
// When that commit fails for good (here a trigger makes the database
// refuse one edge of page 1, as it would a value it cannot hold), the page
// bought meanwhile is discarded: the task fails with the commit's reason,
// nothing of either page is stored, and the discarded answer is still
// billed.
func TestSentCommitFailureDiscardsTheNextPage(t *testing.T) {
	t.Parallel()
	b := setupFresh(t, sandbox.Config{}) // it adds a trigger
	if _, err := b.pool.Exec(context.Background(), `
		CREATE FUNCTION public.refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.follower = 'bad' THEN RAISE EXCEPTION 'refused' USING ERRCODE = '22023'; END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_bad BEFORE INSERT ON shortvideo.follows FOR EACH ROW EXECUTE FUNCTION public.refuse_bad();`); err != nil {
		t.Fatal(err)
	}
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/api/shortvideo/user/followers" && q.Get("cursor") == "":
			fmt.Fprintf(w, `{"followers":[%s,{"uniqueId":"bad","secUid":"Sbad","nickname":"bad"}],"cursor":"c1","hasMore":true}`, followEntries("f1"))
		case r.URL.Path == "/api/shortvideo/user/followers" && q.Get("cursor") == "c1":
			fmt.Fprintf(w, `{"followers":[%s],"cursor":"c2","hasMore":false}`, followEntries("f2"))
		default:
			http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
		}
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, "seeds: {shortvideo: {sec_uids: [SACCT_OWNER]}}\nexpand: {followers: {}}\nlimits: {workers: 1}\n")
	sum := b.run(t, job)
	if sum.State != "done" || sum.Failed != 1 {
		t.Fatalf("run %s (%s), %d failed; want done with 1 failed", sum.State, sum.Reason, sum.Failed)
	}
	got := b.task(t, sum.RunID, kinds.KindSVFollowers, "SACCT_OWNER")
	if got.State != "failed" || !strings.HasPrefix(got.Reason, "cannot store page") || got.Pages != 0 {
		t.Errorf("followers task = %+v, want failed, cannot store page, 0 pages", got)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.follows`); n != 0 {
		t.Errorf("follows = %d, want 0", n)
	}
	// Page 1 and page 2, requested while page 1's commit was read.
	if n := up.calls.Load(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
	if n := b.count(t, `SELECT credits_billed FROM crawl.runs WHERE id = `+strconv.FormatInt(sum.RunID, 10)); n != 2 {
		t.Errorf("credits billed = %d, want 2 (the discarded page still counts)", n)
	}
}

// Pages held while their commit is read count against the in-flight body
// budget: two workers whose pages are 5/8 of the budget each (640 KiB of
// 1 MiB, as 5 MiB pages under the default 8 MiB, an eighth of the bytes to
// decode under -race) would each hold one page and wait for the budget for
// the next, forever, if a page's bodies were given back only when its
// commit is read. Two things give them back: the committer, once the group
// holding the page is committed, and a read about to wait for budget,
// which reads its previous page's commit first (BeforeBudgetWait). Either
// alone keeps this run going; the test fails only if both went.
func TestSentPagesNeverWaitOnTheirOwnBodyBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const budget = 1 << 20
	pad := strings.Repeat("p", 5*budget/8)
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/api/shortvideo/user/followers" {
			http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
			return
		}
		owner := q.Get("secUid")
		page, _ := strconv.Atoi(strings.TrimPrefix(q.Get("cursor"), "c"))
		more := page < 2
		body := fmt.Sprintf(`{"pad":%q,"followers":[%s],"cursor":"c%d","hasMore":%t}`, pad, followEntries(fmt.Sprintf("%s_%d", owner, page)), page+1, more)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		fmt.Fprint(w, body)
	})
	b.baseURL = up.srv.URL + "/api"
	job := b.job(t, "seeds: {shortvideo: {sec_uids: [AAAA_OWNER, BBBB_OWNER]}}\nexpand: {followers: {}}\nlimits: {workers: 2}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runID := b.start(t, job)
	opts := b.options(job, testKey)
	opts.Client.MaxBodyBytes, opts.Client.MaxInflightBytes = budget, budget
	sum, err := pipeline.Run(ctx, opts, job, runID)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("run: %v (%v): the workers waited on budget their own pages held", err, ctx.Err())
	}
	if sum.State != "done" || sum.Failed != 0 {
		t.Fatalf("run %s (%s), %d failed", sum.State, sum.Reason, sum.Failed)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.follows`); n != 6 {
		t.Errorf("follows = %d, want 6", n)
	}
	if n := up.calls.Load(); n != 6 {
		t.Errorf("requests = %d, want 6", n)
	}
}
