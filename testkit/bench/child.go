package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a crawler process started by the harness.
type child struct {
	cmd  *exec.Cmd
	out  lockedBuffer // stdout and stderr
	done chan struct{}
	err  error // of Wait, valid once done is closed
}

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
	c := &child{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	c.cmd.Env = []string{"DATABASE_URL=" + dsn, "CRAWLER_API_KEY=" + apiKey, "PATH=" + os.Getenv("PATH")}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	// A harness that is cancelled does not leave crawlers behind.
	stop := context.AfterFunc(ctx, func() { _ = c.cmd.Process.Kill() })
	go func() {
		<-c.done
		stop()
	}()
	return c, nil
}

// wait waits for the process and returns its exit code, or minus the
// signal that killed it.
func (c *child) wait() int {
	<-c.done
	var ee *exec.ExitError
	switch {
	case c.err == nil:
		return 0
	case errors.As(c.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		return -1000
	}
}

// waitTimeout is wait, killing the process after d.
func (c *child) waitTimeout(d time.Duration) int {
	select {
	case <-c.done:
	case <-time.After(d):
		_ = c.cmd.Process.Kill()
	}
	return c.wait()
}

func (c *child) signal(sig os.Signal) { _ = c.cmd.Process.Signal(sig) }

// output is what the process wrote, for error messages.
func (c *child) output() string {
	s := strings.TrimSpace(c.out.String())
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

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
