package pipeline_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// An answer claiming 2^62 credits fails only its task, as bad data: the
// ledger bills it 1 (no sum overflows) and the budget holds; the other
// tasks of the run are done.
func TestOverflowingChargeFailsItsTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.URL.Query().Get("handle")
		charge := "1"
		if h == "greedy" {
			charge = "4611686018427387904"
		}
		fmt.Fprintf(w, `{"credits_charged":%s,"credits_remaining":9223372036854775807,"user":{"uniqueId":%q,"secUid":"S%s"},"stats":{}}`, charge, h, h)
	}))
	t.Cleanup(srv.Close)
	b.baseURL = srv.URL + "/api"
	job := b.job(t, "limits: {max_credits: 10}\nexpand: {}\nseeds: {shortvideo: {profiles: [a1, greedy, a2]}}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	for q, want := range map[string]int64{
		`SELECT credits_billed FROM crawl.runs`:                 3,
		`SELECT count(*) FROM crawl.tasks WHERE state = 'done'`: 2,
		`SELECT count(*) FROM crawl.tasks WHERE state = 'failed' AND key = 'greedy'
		   AND reason LIKE '%not a credible charge%'`: 1,
		`SELECT coalesce(sum(credits_charged), 0) FROM crawl.credit_usage`: 2,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
