package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/sinks"
)

// Workload 4: no latency, no quota, pages of 50 entries: how fast the
// pipeline itself goes end to end, and how its writer compares with raw
// COPY into the same tables, measured right before and after it.
const ceilingWorkers = 8

func runCeiling(ctx context.Context, e *env) (*outcome, error) {
	d := e.size.ceilingT
	out := &outcome{setup: fmt.Sprintf("sandbox without latency or quota in its own process (`crawler sandbox`), pages of 50; %d workers; %d seed accounts of 1,000,000 followers; pipeline in-process for %s. "+
		"Then, in the same database (bookkeeping tables vacuumed), %d follower pages (50 users + 50 edges each) written by the committer's code for a full group (%d pages in one transaction, one pipeline written as it is encoded and one round trip's wait, each table's rows of the group merged, in statements of up to %d rows: frontier.WriteRows; the tasks' advances left out; one connection), between two raw CopyFrom loads of as many rows (one COPY per table), into the same tables; %d rounds, the median ratio.",
		ceilingWorkers, quotaSeeds, d, e.size.copyPages, frontier.GroupMax, sinks.MaxStatementRows, writerRounds)}
	base, stop, err := e.startSandboxProcess(ctx)
	if err != nil {
		return out, err
	}
	defer stop()
	p, err := e.startInProcess(ctx, "ceiling", jobSpec{
		name: "bench-ceiling", baseURL: base, workers: ceilingWorkers,
		profiles: bigAccounts("cei", quotaSeeds, 1_000_000), followersOnly: true,
	})
	if err != nil {
		return out, err
	}
	defer p.close()

	samples := make(chan []usageSample, 1)
	sctx, stopSampling := context.WithCancel(ctx)
	go func() { samples <- sampleUsage(sctx, base) }()
	cpu0, sys0 := selfCPU(), machineCPU()
	begin := time.Now()
	rctx, cancel := context.WithTimeout(ctx, d)
	sum, err := p.run(rctx)
	cancel()
	took := time.Since(begin)
	cpu, sys := selfCPU()-cpu0, machineCPU()-sys0
	stopSampling()
	series := <-samples
	if err != nil {
		return out, err
	}
	var runsBytes, runsDead, tasksBytes int64
	if err := p.pool.QueryRow(ctx, `SELECT pg_total_relation_size('crawl.runs'), coalesce((SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'crawl.runs'::regclass), 0),
		pg_total_relation_size('crawl.tasks')`).Scan(&runsBytes, &runsDead, &tasksBytes); err != nil {
		return out, err
	}
	pagesPerS := float64(sum.Pages) / took.Seconds()
	rowsPerS := float64(sum.Rows) / took.Seconds()
	per100k := func(c time.Duration) float64 { return c.Seconds() / float64(max(sum.Rows, 1)) * 1e5 }
	detail := fmt.Sprintf("%d pages, %d rows committed in %.1f s", sum.Pages, sum.Rows, took.Seconds())
	bloat := fmt.Sprintf("crawl.runs, one row per run, takes %.1f MB (%d dead row versions) and crawl.tasks %.1f MB for %d tasks: "+
		"the run's credit counters are updated twice per request (reserve and settle), and a task's row at every page",
		float64(runsBytes)/(1<<20), runsDead, float64(tasksBytes)/(1<<20), quotaSeeds*2)
	out.figures = append(out.figures,
		Figure{Name: "pages/s end to end", Value: pagesPerS, Unit: "pages/s", Detail: detail},
		Figure{Name: "rows/s end to end", Value: rowsPerS, Unit: "rows/s", Detail: detail},
	)
	if first, last, ok := firstLastRate(series, d/4); ok {
		f := Figure{
			Name: fmt.Sprintf("pages/s in the last %s / in the first %s", d/4, d/4), Value: last / first,
			Detail: fmt.Sprintf("%.0f pages/s, then %.0f pages/s (billable requests at the sandbox, sampled every %s)", first, last, usageEvery),
		}
		if last < 0.9*first {
			f.Why = "throughput decays as the run goes on; " + bloat + "."
		}
		out.figures = append(out.figures, f)
	}
	out.figures = append(out.figures,
		Figure{Name: "crawler CPU per 100k rows", Value: per100k(cpu), Unit: "CPU s",
			Detail: fmt.Sprintf("%.1f CPU s (user + system) of the crawler for %d rows", cpu.Seconds(), sum.Rows)},
		Figure{Name: "whole machine CPU per 100k rows (crawler + PostgreSQL + sandbox)", Value: per100k(sys), Unit: "CPU s",
			Detail: fmt.Sprintf("%.1f CPU s busy of %.1f available (%d cores x %.1f s)", sys.Seconds(), float64(runtime.NumCPU())*took.Seconds(), runtime.NumCPU(), took.Seconds()),
			Why:    "PostgreSQL takes most of it; " + bloat + "."},
	)

	// The writer against COPY, both on the tables as the run left them but
	// with the bookkeeping tables vacuumed: this compares the writer's
	// statements with COPY, not either with the bloat above.
	if _, err := p.pool.Exec(ctx, `VACUUM (ANALYZE) crawl.runs, crawl.tasks, crawl.credit_usage, shortvideo.users, shortvideo.follows`); err != nil {
		return out, err
	}
	w, err := measureWriter(ctx, p.pool, p.runID, e.size.copyPages)
	if err != nil {
		return out, fmt.Errorf("writer vs copy: %w", err)
	}
	out.figures = append(out.figures, Figure{
		Name: "writer rows/s / raw CopyFrom rows/s", Value: w.ratio(), Aim: atLeast(0.6),
		Detail: fmt.Sprintf("median of %d rounds (ratios %s): writer %s rows/s; CopyFrom %s rows/s, before and after each round; %d rows each",
			writerRounds, joinFloats(w.ratios(), "%.3f"), joinFloats(w.writer, "%.0f"), joinFloats(w.copies, "%.0f"), w.rows),
		Why: fmt.Sprintf("the writer upserts (INSERT ... SELECT unnest ... ON CONFLICT DO UPDATE ... WHERE IS DISTINCT FROM), up to %d rows per statement, a group of pages per transaction so each page commits with its cursor; COPY appends %d rows per statement with no conflict handling.", sinks.MaxStatementRows, w.rows/2),
	})
	return out, nil
}

// startSandboxProcess runs `crawler sandbox` on a free port and returns its
// base URL and how to stop it.
func (e *env) startSandboxProcess(ctx context.Context) (string, func(), error) {
	bin, err := e.crawlerBin(ctx)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "sandbox", "--addr", "127.0.0.1:0", "--api-key", apiKey)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-lines:
		if m := sandboxAddrRe.FindStringSubmatch(l); m != nil {
			return m[1], stop, nil
		}
		stop()
		return "", nil, fmt.Errorf("crawler sandbox said %q", l)
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("crawler sandbox did not start")
	case <-ctx.Done():
		stop()
		return "", nil, ctx.Err()
	}
}

var sandboxAddrRe = regexp.MustCompile(`serving (http://\S+/api)`)

// usageSample is the sandbox's billable count at an instant.
type usageSample struct {
	at       time.Time
	billable int64
}

const usageEvery = 250 * time.Millisecond

// sampleUsage polls GET /debug/usage of the sandbox at base until ctx ends.
func sampleUsage(ctx context.Context, base string) []usageSample {
	u := strings.TrimSuffix(base, "/api") + "/debug/usage"
	var out []usageSample
	tick := time.NewTicker(usageEvery)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		req.Header.Set("x-api-key", apiKey)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			var usage struct {
				Billable int64 `json:"billable"`
			}
			if json.NewDecoder(resp.Body).Decode(&usage) == nil {
				out = append(out, usageSample{at: time.Now(), billable: usage.Billable})
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
	}
}

// firstLastRate is the billable rate over the first and the last span of
// the samples, from the first sample that saw a request.
func firstLastRate(s []usageSample, span time.Duration) (first, last float64, ok bool) {
	i := 0
	for i < len(s) && s[i].billable == 0 {
		i++
	}
	if i > 0 {
		i--
	}
	s = s[i:]
	if len(s) < 2 || s[len(s)-1].at.Sub(s[0].at) < 2*span {
		return 0, 0, false
	}
	rate := func(a, b usageSample) float64 { return float64(b.billable-a.billable) / b.at.Sub(a.at).Seconds() }
	j := 0
	for j < len(s)-1 && s[j].at.Sub(s[0].at) < span {
		j++
	}
	k := len(s) - 1
	for k > 0 && s[len(s)-1].at.Sub(s[k].at) < span {
		k--
	}
	return rate(s[0], s[j]), rate(s[k], s[len(s)-1]), true
}

// writerRounds is how many times the writer is timed, each between two
// COPY loads: the figure is the median of the rounds' ratios, so that a
// burst of load on the shared machine during one load moves it little.
// Five, not three: one run's rounds spread by 0.03 and more (0.548 to
// 0.579 in a full bench), and the median of five moves less for one
// disturbed round; a round adds about a second.
const writerRounds = 5

// writerRun is the writer against raw COPY, in rows per second: each
// round's writer between the COPY loads before and after it (copies has
// one more element than writer).
type writerRun struct {
	rows   int // rows of each load
	writer []float64
	copies []float64
}

// ratios are each round's writer over the mean of its two COPY loads.
func (w writerRun) ratios() []float64 {
	r := make([]float64, len(w.writer))
	for i, x := range w.writer {
		r[i] = x / ((w.copies[i] + w.copies[i+1]) / 2)
	}
	return r
}

func (w writerRun) ratio() float64 {
	r := slices.Clone(w.ratios())
	slices.Sort(r)
	return r[len(r)/2]
}

func measureWriter(ctx context.Context, pool *pgxpool.Pool, runID int64, pages int) (*writerRun, error) {
	const owner = "bench_owner"
	if _, err := pool.Exec(ctx, `INSERT INTO shortvideo.users (unique_id, raw, first_seen_run, last_seen_run) VALUES ($1, '{}', $2, $2) ON CONFLICT DO NOTHING`, owner, runID); err != nil {
		return nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	w := &writerRun{rows: pages * 100}
	load := func(prefix string) (float64, error) {
		var users, follows [][]any
		for p := range pages {
			b := followerPage(prefix, p, owner)
			fs := sinks.Rows[sinks.SVFollow](b)
			for i, u := range sinks.Rows[sinks.SVUser](b) {
				users = append(users, []any{u.UniqueID, *u.SecUID, *u.Nickname, *u.Verified, u.Raw, runID, runID})
				f := fs[i]
				follows = append(follows, []any{f.Follower, f.Followee, f.Raw, runID, runID})
			}
		}
		begin := time.Now()
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"shortvideo", "users"},
				[]string{"unique_id", "sec_uid", "nickname", "verified", "raw", "first_seen_run", "last_seen_run"}, pgx.CopyFromRows(users)); err != nil {
				return err
			}
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"shortvideo", "follows"},
				[]string{"follower", "followee", "raw", "first_seen_run", "last_seen_run"}, pgx.CopyFromRows(follows))
			return err
		})
		return float64(len(users)+len(follows)) / time.Since(begin).Seconds(), err
	}
	// The committer's own code for a full group (frontier.WriteRows,
	// without the tasks' advances): BEGIN, each table's rows of the
	// group's pages (sinks.Merge) in statements of up to
	// sinks.MaxStatementRows rows, COMMIT, in one pipeline.
	write := func(prefix string) (float64, error) {
		batches := make([]*sinks.Batch, pages)
		for p := range batches {
			batches[p] = followerPage(prefix, p, owner)
		}
		begin := time.Now()
		for i := 0; i < len(batches); i += frontier.GroupMax {
			if err := frontier.WriteRows(ctx, conn.Conn(), runID, batches[i:min(i+frontier.GroupMax, len(batches))]); err != nil {
				return 0, err
			}
		}
		return float64(w.rows) / time.Since(begin).Seconds(), nil
	}
	for round := range writerRounds + 1 {
		c, err := load(fmt.Sprintf("c%d_", round))
		if err != nil {
			return nil, err
		}
		w.copies = append(w.copies, c)
		if round == writerRounds {
			break
		}
		x, err := write(fmt.Sprintf("w%d_", round))
		if err != nil {
			return nil, err
		}
		w.writer = append(w.writer, x)
	}
	return w, nil
}

// followerPage is a followers page of owner as the pipeline normalizes it:
// 50 users known by their list entry and 50 edges.
func followerPage(prefix string, p int, owner string) *sinks.Batch {
	var b sinks.Batch
	for i := range 50 {
		id := fmt.Sprintf("%s%07d%02d", prefix, p, i)
		sec := "MS4wLjABAAAA" + id
		nick := "Nick " + strconv.Itoa(i)
		verified := i%20 == 0
		raw := fmt.Appendf(nil, `{"uniqueId":%q,"nickname":%q,"verified":%t,"secUid":%q}`, id, nick, verified, sec)
		sinks.Add(&b, sinks.SVUser{UniqueID: id, SecUID: &sec, Nickname: &nick, Verified: &verified, Raw: raw})
		sinks.Add(&b, sinks.SVFollow{Follower: id, Followee: owner, Raw: raw})
	}
	return &b
}

// selfCPU is the user+system CPU time of this process so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineCPU is the busy CPU time of all cores so far (/proc/stat).
func machineCPU() time.Duration {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range fields[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest time is already in user
			break
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}

// joinFloats formats each of v with format, joined by ", ".
func joinFloats(v []float64, format string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, ", ")
}
