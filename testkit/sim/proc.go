package sim

import (
	"context"
	"strings"
	"sync"
	"syscall"

	"github.com/socialcrawl/crawler/testkit/childproc"
)

// proc is a crawler process of the simulation.
type proc struct {
	*childproc.Proc
	args []string

	mu       sync.Mutex
	signaled string // the signal the simulation sent ("KILL", "TERM"), if any
}

// startCrawler starts the crawler binary with args on database dbURL.
func (e *Env) startCrawler(ctx context.Context, dbURL string, args ...string) (*proc, error) {
	p, err := childproc.Start(ctx, e.bin, []string{"DATABASE_URL=" + dbURL, "CRAWLER_API_KEY=" + apiKey}, args...)
	if err != nil {
		return nil, err
	}
	return &proc{Proc: p, args: args}, nil
}

// signal sends sig ("KILL" or "TERM") unless the process has ended.
func (p *proc) signal(sig string) {
	select {
	case <-p.Done():
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
	_ = p.Cmd.Process.Signal(s)
}

func (p *proc) signalSent() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signaled
}

// tail is the last lines of the process's output, on one line.
func (p *proc) tail(n int) string {
	lines := strings.Split(strings.TrimSpace(p.Output()), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
