package sim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// proc is a crawler process of the simulation.
type proc struct {
	args []string
	cmd  *exec.Cmd
	out  lockedBuffer // stdout and stderr
	done chan struct{}
	err  error // of Wait, valid once done is closed

	mu       sync.Mutex
	signaled string // the signal the simulation sent ("KILL", "TERM"), if any
}

// startCrawler starts the crawler binary with args on database dbURL.
func (e *Env) startCrawler(ctx context.Context, dbURL string, args ...string) (*proc, error) {
	p := &proc{args: args, cmd: exec.Command(e.bin, args...), done: make(chan struct{})}
	p.cmd.Env = []string{"DATABASE_URL=" + dbURL, "CRAWLER_API_KEY=" + apiKey, "PATH=" + os.Getenv("PATH")}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	// A simulation cancelled leaves no crawler behind.
	stop := context.AfterFunc(ctx, func() { _ = p.cmd.Process.Kill() })
	go func() {
		<-p.done
		stop()
	}()
	return p, nil
}

// signal sends sig ("KILL" or "TERM") unless the process has ended.
func (p *proc) signal(sig string) {
	select {
	case <-p.done:
		return
	default:
	}
	p.mu.Lock()
	p.signaled = sig
	p.mu.Unlock()
	s := syscall.SIGKILL
	if sig == "TERM" {
		s = syscall.SIGTERM
	}
	_ = p.cmd.Process.Signal(s)
}

func (p *proc) signalSent() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signaled
}

// wait returns the exit code, or minus the signal that ended the process.
func (p *proc) wait() int {
	<-p.done
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		return -1000
	}
}

// tail is the last lines of the process's output, on one line.
func (p *proc) tail(n int) string {
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
