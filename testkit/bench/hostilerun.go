package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Workload 10: the crawler binary at its default settings (4 workers here)
// against an upstream that sends hostile answers (HostileHandler), one class
// at a time, four tasks of it at once: the process's peak RSS (VmHWM polled
// until it exits), the wall time of the whole run, and how its tasks ended.
// The last class is SIGTERM while four bodies are still trickling in: the
// time from the signal to the exit.
const (
	hostileWorkers = 4
	hostileMaxMB   = 150
	hostileSlack   = 3 * time.Second // SIGTERM: exit within --grace plus this
	hostileGrace   = 5 * time.Second // crawler run's default --grace
)

// hostileClass is one kind of hostile answer, sent to four tasks at once.
type hostileClass struct {
	prefix string // HostileHandler's handle prefix
	name   string
	exit   int    // the run's expected exit code
	state  string // every task's expected "state: reason" prefix
	reason string // and a part of its reason
	why    string
}

var hostileClasses = []hostileClass{
	{HostileStr, "7.5 MiB string field (under the cap)", 0, "done: ", "", whyBudget},
	{HostileStr30, "30 MiB body with Content-Length", 4, "failed: ", "body larger than", "a declared length over the cap is refused before the body is read."},
	{HostileChunked, "30 MiB body without Content-Length", 4, "failed: ", "body larger than", whyCap},
	{HostileFlood, "1 GiB body without Content-Length", 4, "failed: ", "body larger than", whyCap},
	{HostileGzip, "gzip bomb (256 KiB -> 256 MiB)", 4, "failed: ", "body larger than", "the cap counts bytes after decompression: " + whyCap},
	{HostileDeep, "8 videos nested 9,000 deep", 4, "failed: ", "nested deeper than", whyScan},
	{HostileDigits, "10,000-digit numbers", 4, "failed: ", "number literal longer than", whyScan},
	{HostileExp, "huge exponents (1e999999999)", 4, "failed: ", "malformed body", "exponents are read without big-number arithmetic; a value out of range fails its task."},
	{HostileEcho, "400 body echoing the key", 4, "failed: ", "[REDACTED]", "every body and client error is scrubbed of the key (raw and JSON-escaped) right after it is read."},
}

const (
	whyBudget = "a body is read into one buffer of its size and counted against the process-wide 8 MiB in-flight budget until its page commits: four 7.5 MiB bodies are worked one at a time, each byte costing up to about 9 bytes until its commit."
	whyCap    = "a body of unknown length is read to the 8 MiB cap and no further; its reservation grows from 1 MiB to the cap within the in-flight budget."
	whyScan   = "one linear scan bounds nesting (64) and number literals (40 characters) before any decoding."
)

func runHostile(ctx context.Context, e *env) (*outcome, error) {
	grace := hostileGrace
	if e.cfg.Smoke {
		grace = time.Second
	}
	out := &outcome{setup: fmt.Sprintf("the crawler binary (`crawler run`) as a child process at the default settings but %d workers (body cap 8 MiB, in-flight body budget 8 MiB, --grace %s), "+
		"against a local upstream serving hostile answers of the profile endpoint (testkit/bench/hostile.go): one run per class, four profile seeds of that class answered at once, on one database; "+
		"VmHWM of the child polled every 10 ms until it exited, wall time from start to exit (migrations included), task states read from crawl.tasks; "+
		"for the key-echoing 400, the key searched in the run's stdout and stderr, in `crawler status` and in every row of every table. "+
		"Last, SIGTERM once the four trickling bodies (a byte every 50 ms, never ending) have been requested.", hostileWorkers, grace)}

	var requests atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return out, err
	}
	h := HostileHandler(apiKey)
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	base := fmt.Sprintf("http://%s/api", ln.Addr())

	dsn, err := e.freshDB(ctx, "hostile")
	if err != nil {
		return out, err
	}
	dir, err := os.MkdirTemp("", "bench-hostile-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return out, err
	}
	defer conn.Close(context.Background())

	classes := hostileClasses
	if e.cfg.Smoke {
		// The key-echoing class first: its search of every row of every
		// table then reads its own run's rows, not also the 30 MB of the
		// 7.5 MiB class's (~3.5 CPU-s of the server's). Only that class's
		// upstream sends the key back.
		i := slices.IndexFunc(classes, func(c hostileClass) bool { return c.prefix == HostileEcho })
		classes = append([]hostileClass{classes[i]}, slices.Delete(slices.Clone(classes), i, i+1)...)
	}
	var bad []string // classes whose tasks did not end as expected
	for _, c := range classes {
		handles := make([]string, hostileWorkers)
		for i := range handles {
			handles[i] = fmt.Sprintf("%s_%c", c.prefix, 'a'+i)
		}
		job, err := jobSpec{name: "bench-hostile-" + c.prefix, baseURL: base, workers: hostileWorkers, profiles: handles, expand: "{}"}.write(dir)
		if err != nil {
			return out, err
		}
		before := requests.Load()
		m, err := e.measureCrawler(ctx, dsn, nil, "run", job)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.name, err)
		}
		states, err := hostileStates(ctx, conn)
		if err != nil {
			return out, err
		}
		n := requests.Load() - before
		ok, summary, reason := judgeStates(states, c.state, c.reason)
		problems := []string{}
		if !ok {
			problems = append(problems, "tasks "+summary+": "+reason)
		}
		if m.code != c.exit {
			problems = append(problems, fmt.Sprintf("exit %d, want %d", m.code, c.exit))
		}
		if strings.Contains(m.out, "panic") {
			problems = append(problems, "panic")
		}
		if n != hostileWorkers {
			problems = append(problems, fmt.Sprintf("%d requests, want %d (one per task)", n, hostileWorkers))
		}
		f := Figure{
			Name:  c.name + " ×4: peak RSS",
			Value: mb(m.peak), Unit: "MB",
			Text:   fmt.Sprintf("%.1f MB; %.1f s; %s", mb(m.peak), m.wall.Seconds(), summary),
			Aim:    Aim{Op: "<=", Bound: hostileMaxMB, Text: fmt.Sprintf("≤ %d MB", hostileMaxMB)},
			Detail: fmt.Sprintf("exit %d, %d requests, wall %.2f s (whole run); tasks: %s", m.code, n, m.wall.Seconds(), cut(reason, 160)),
			Why:    c.why,
		}
		if c.prefix == HostileEcho {
			copies, where, err := e.keyCopies(ctx, conn, dsn, m.out)
			if err != nil {
				return out, err
			}
			f = Figure{
				Name:  c.name + " ×4: copies of the key in output and database",
				Value: float64(copies),
				Text:  fmt.Sprintf("%d copies; %.1f MB; %.1f s; %s", copies, mb(m.peak), m.wall.Seconds(), summary),
				Aim:   exactly(0),
				Detail: fmt.Sprintf("the key (raw and \\u-escaped) searched in stdout+stderr, `crawler status` and every row of every table%s; exit %d, peak RSS %.1f MB, wall %.2f s; tasks: %s",
					where, m.code, mb(m.peak), m.wall.Seconds(), cut(reason, 160)),
				Why: c.why,
			}
		}
		if len(problems) > 0 {
			bad = append(bad, c.name+": "+strings.Join(problems, "; "))
		}
		out.figures = append(out.figures, f)
		e.log.Info("hostile class", "class", c.prefix, "exit", m.code, "peak_mb", mb(m.peak), "wall", m.wall.Round(time.Millisecond), "tasks", summary)
	}

	// SIGTERM mid-body.
	handles := make([]string, hostileWorkers)
	for i := range handles {
		handles[i] = fmt.Sprintf("%s_%c", HostileTrickle, 'a'+i)
	}
	job, err := jobSpec{name: "bench-hostile-trickle", baseURL: base, workers: hostileWorkers, profiles: handles, expand: "{}"}.write(dir)
	if err != nil {
		return out, err
	}
	before := requests.Load()
	var signalled time.Time
	m, err := e.measureCrawler(ctx, dsn, func(c *child) bool {
		if requests.Load()-before < hostileWorkers {
			return false
		}
		signalled = time.Now()
		c.signal(syscall.SIGTERM)
		return true
	}, "run", "--grace", grace.String(), job)
	if err != nil {
		return out, fmt.Errorf("SIGTERM mid-body: %w", err)
	}
	if signalled.IsZero() {
		return out, fmt.Errorf("SIGTERM mid-body: the crawler exited (code %d) before its 4 requests: %s", m.code, cut(m.out, 2000))
	}
	took := m.end.Sub(signalled)
	states, err := hostileStates(ctx, conn)
	if err != nil {
		return out, err
	}
	released, summary, reason := judgeStates(states, "pending: ", "")
	if m.code != 3 || !released {
		bad = append(bad, fmt.Sprintf("SIGTERM mid-body: exit %d, want 3; tasks %s, want 4 pending (released)", m.code, summary))
	}
	aim := grace + hostileSlack
	out.figures = append(out.figures, Figure{
		Name:  "SIGTERM mid-body (4 bodies trickling in): signal to exit",
		Value: took.Seconds(), Unit: "s",
		Text:   fmt.Sprintf("%.2f s; %.1f MB; %s", took.Seconds(), mb(m.peak), summary),
		Aim:    Aim{Op: "<=", Bound: aim.Seconds(), Text: fmt.Sprintf("≤ grace + %s (%s)", hostileSlack, aim)},
		Detail: fmt.Sprintf("--grace %s; exit %d, peak RSS %.1f MB, wall %.2f s; tasks: %s", grace, m.code, mb(m.peak), m.wall.Seconds(), cut(reason, 160)),
		Why:    "in-flight requests get --grace to finish, then are cancelled; a body being read or parsed stops at its context's end.",
	})
	if len(bad) > 0 {
		return out, fmt.Errorf("unexpected outcomes: %s", strings.Join(bad, " | "))
	}
	return out, nil
}

// measured is a crawler process run to its end: exit code, peak RSS, wall
// time, output.
type measured struct {
	code int
	peak int64
	wall time.Duration
	end  time.Time
	out  string
}

// measureCrawler runs the crawler with args, polling its VmHWM every 10 ms
// until it exits (at most 2 minutes). poll, when set, is called at every
// tick until it returns true.
func (e *env) measureCrawler(ctx context.Context, dsn string, poll func(*child) bool, args ...string) (measured, error) {
	if _, err := e.crawlerBin(ctx); err != nil { // built before the clock starts
		return measured{}, err
	}
	begin := time.Now()
	c, err := e.startCrawler(ctx, dsn, args...)
	if err != nil {
		return measured{}, err
	}
	var m measured
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	for {
		select {
		case <-c.Done():
			m.end = time.Now()
			m.wall = m.end.Sub(begin)
			m.code = c.Wait()
			m.out = c.Output()
			return m, nil
		case <-ctx.Done():
			c.signal(syscall.SIGKILL)
			c.Wait()
			return m, ctx.Err()
		case <-deadline.C:
			c.signal(syscall.SIGKILL)
			c.Wait()
			return m, fmt.Errorf("crawler still running after 2 minutes: %s", c.output())
		case <-tick.C:
			if hwm, err := vmHWM(c.Pid()); err == nil {
				m.peak = max(m.peak, hwm)
			}
			if poll != nil && poll(c) {
				poll = nil
			}
		}
	}
}

// hostileStates is "state: reason" per task key of the latest run.
func hostileStates(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	rows, err := conn.Query(ctx, `SELECT key, state || ': ' || coalesce(reason, '') FROM crawl.tasks
		WHERE run_id = (SELECT max(id) FROM crawl.runs)`)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var k, v string
	_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		out[k] = v
		return nil
	})
	return out, err
}

// judgeStates reports whether every task is in state (a "state: " prefix)
// with want in its reason, the states counted ("4 failed") and the distinct
// "state: reason" strings.
func judgeStates(states map[string]string, state, want string) (ok bool, summary, reasons string) {
	count := map[string]int{}
	distinct := map[string]bool{}
	ok = len(states) == hostileWorkers
	for _, v := range states {
		st, _, _ := strings.Cut(v, ":")
		count[st]++
		distinct[v] = true
		if !strings.HasPrefix(v, state) || !strings.Contains(v, want) {
			ok = false
		}
	}
	var parts []string
	for st, n := range count {
		parts = append(parts, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(parts)
	var rs []string
	for v := range distinct {
		rs = append(rs, strings.TrimSuffix(v, ": "))
	}
	sort.Strings(rs)
	return ok, strings.Join(parts, ", "), strings.Join(rs, " / ")
}

// keyCopies counts the API key, raw or \u-escaped, in out, in `crawler
// status` and in every row of every table of the database.
func (e *env) keyCopies(ctx context.Context, conn *pgx.Conn, dsn, out string) (int, string, error) {
	count := keyCount
	n := count(out)
	var where []string
	if n > 0 {
		where = append(where, fmt.Sprintf("run output %d", n))
	}
	st, err := e.startCrawler(ctx, dsn, "status")
	if err != nil {
		return 0, "", err
	}
	if code := st.waitTimeout(time.Minute); code != 0 && code != 4 {
		return 0, "", fmt.Errorf("crawler status: exit %d: %s", code, st.output())
	}
	if k := count(st.Output()); k > 0 {
		n += k
		where = append(where, fmt.Sprintf("crawler status %d", k))
	}
	rows, err := conn.Query(ctx, `SELECT format('%I.%I', table_schema, table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		return 0, "", err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, "", err
	}
	for _, t := range tables {
		var k int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+t+` x WHERE strpos(x::text, $1) > 0 OR strpos(x::text, $2) > 0`, apiKey, escapedKey()).Scan(&k); err != nil {
			return 0, "", err
		}
		if k > 0 {
			n += k
			where = append(where, fmt.Sprintf("%s %d rows", t, k))
		}
	}
	s := fmt.Sprintf(" (%d tables)", len(tables))
	if len(where) > 0 {
		s = fmt.Sprintf(" (%d tables; found in %s)", len(tables), strings.Join(where, ", "))
	}
	return n, s, nil
}

// keyCount counts the API key in s, raw or \u-escaped.
func keyCount(s string) int { return strings.Count(s, apiKey) + strings.Count(s, escapedKey()) }

// escapedKey is the key with every character \u-escaped, as the echoing
// upstream sends it.
func escapedKey() string {
	var b strings.Builder
	for _, c := range apiKey {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// cut shortens s to about n bytes, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
