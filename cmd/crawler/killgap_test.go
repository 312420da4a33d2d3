package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// What a kill -9 leaves out of the ledger (issue 33.3): answers billed
// since the hold's last beat (up to a second of them) and the requests in
// flight. The dead process's hold covers them: crawler status shows it as
// charged or not, unknown, and the ledger plus it is at least what the
// upstream billed. Measured: killed mid-list with one worker, a few
// answers of the last second were missing from the ledger.
func TestKill9UnknownCreditsCoverTheUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 20 * time.Millisecond}})
	db := pgtest.DB(t)
	job := writeJob(t, fmt.Sprintf(`name: kill-gap
api: {base_url: %s, max_retries: 2, timeout: 2s}
limits: {workers: 1, lease_timeout: 2s, max_credits: 100000, max_pages: 200}
seeds:
  shortvideo:
    profiles: [huge_f6000_g0, vast_f6000_g0]
`, up.url))
	var once sync.Once
	killed := make(chan struct{})
	p := startCrawler(t, db, "run", job)
	up.setTrigger(func(n int64) {
		if n >= 40 {
			once.Do(func() {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				close(killed)
			})
		}
	})
	if code := p.wait(); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want SIGKILL: %s", code, p.stderr.String())
	}
	<-killed
	up.setTrigger(nil)
	upstream := up.sb.Usage(cliKey)
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	ageDeadHolds(t, conn)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	var st struct {
		Billed  int64 `json:"credits_billed"`
		Unknown int64 `json:"credits_unknown"`
	}
	// The hold counts as a dead process's once it has not beaten for
	// holdDead: aged to holdLive short of it, status still finds it live
	// at first.
	deadline := time.Now().Add(45 * time.Second)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for st.Unknown == 0 {
		r := invoke(t, env, "status", "--json")
		if r.code != 0 {
			t.Fatalf("status: exit %d: %s", r.code, r.stderr)
		}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("status --json: %v: %s", err, r.stdout)
		}
		if st.Unknown > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no credits charged or not after 45 s: %s", r.stdout)
		}
		<-tick.C
	}
	var ledger, answers int64
	if err := conn.QueryRow(context.Background(), `SELECT coalesce(sum(billed), 0), coalesce(sum(requests - free - rate_limited - errors), 0)
		FROM crawl.credit_usage WHERE run_id = 1`).Scan(&ledger, &answers); err != nil {
		t.Fatal(err)
	}
	t.Logf("upstream billed %d credits in %d answers; the ledger %d credits in %d answers (%d missing); charged or not: %d",
		upstream.Credits, upstream.Billable, ledger, answers, upstream.Billable-answers, st.Unknown)
	if ledger != st.Billed {
		t.Errorf("the ledger (crawl.credit_usage) says %d, the run %d", ledger, st.Billed)
	}
	if ledger+st.Unknown < upstream.Credits {
		t.Errorf("ledger %d + unknown %d < %d billed by the upstream: the dead process's hold does not cover what it was charged", ledger, st.Unknown, upstream.Credits)
	}
	var inLedger int64
	if err := conn.QueryRow(context.Background(), `SELECT credits_unknown FROM crawl.run_ledger WHERE run_id = 1`).Scan(&inLedger); err != nil || inLedger != st.Unknown {
		t.Errorf("crawl.run_ledger.credits_unknown = %d, %v; want %d", inLedger, err, st.Unknown)
	}
	var rep struct {
		Run struct {
			Unknown int64 `json:"credits_unknown"`
		} `json:"run"`
	}
	if r := invoke(t, env, "report", "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || rep.Run.Unknown != st.Unknown {
		t.Errorf("report: exit %d, credits_unknown %d; want %d: %s", r.code, rep.Run.Unknown, st.Unknown, r.stderr)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if r := invoke(t, env, "report", "--html", html); r.code != 0 {
		t.Errorf("report --html: exit %d: %s", r.code, r.stderr)
	} else if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "credits charged or not: unknown") {
		t.Errorf("the HTML report does not show the unknown credits (%v)", err)
	}
	r := invoke(t, env, "status")
	if !regexp.MustCompile(fmt.Sprintf(`credits charged or not +%d: unknown`, st.Unknown)).MatchString(r.stdout) {
		t.Errorf("status does not show the unknown credits:\n%s", r.stdout)
	}
}
