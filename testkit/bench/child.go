package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/testkit/childproc"
)

// child is a crawler process started by the harness.
type child struct{ *childproc.Proc }

// startCrawler runs the crawler binary with args, DATABASE_URL=dsn and the
// sandbox key in CRAWLER_API_KEY.
func (e *env) startCrawler(ctx context.Context, dsn string, args ...string) (*child, error) {
	bin, err := e.crawlerBin(ctx)
	if err != nil {
		return nil, err
	}
	return startChild(ctx, bin, dsn, args...)
}

// startChild runs bin with args, DATABASE_URL=dsn and the sandbox key in
// CRAWLER_API_KEY.
func startChild(ctx context.Context, bin, dsn string, args ...string) (*child, error) {
	p, err := childproc.Start(ctx, bin, []string{"DATABASE_URL=" + dsn, "CRAWLER_API_KEY=" + apiKey}, args...)
	if err != nil {
		return nil, err
	}
	return &child{p}, nil
}

// waitTimeout is Wait, killing the process after d.
func (c *child) waitTimeout(d time.Duration) int {
	select {
	case <-c.Done():
	case <-time.After(d):
		_ = c.Cmd.Process.Kill()
	}
	return c.Wait()
}

func (c *child) signal(sig os.Signal) { _ = c.Cmd.Process.Signal(sig) }

// output is the end of what the process wrote, for error messages.
func (c *child) output() string {
	s := strings.TrimSpace(c.Output())
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

// vmHWM is the peak resident set so far of a running process, in bytes
// (VmHWM in /proc/<pid>/status).
func vmHWM(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// cpuSeconds is the CPU time a running process has used so far, user and
// system (utime and stime in /proc/<pid>/stat, at 100 ticks a second).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(utime+stime) / 100, nil
}
