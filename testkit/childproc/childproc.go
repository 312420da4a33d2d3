// Package childproc runs a program (the crawler binary, the benchmarks'
// load client) as a child process of the harness: the benchmarks and the
// simulator start, watch and signal crawlers the same way. Its output is
// kept, its end read as its exit code or minus the signal that ended it,
// and it is killed when the harness's context ends.
package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// Proc is a running child process.
type Proc struct {
	Cmd  *exec.Cmd
	out  Buffer // stdout and stderr
	done chan struct{}
	err  error // of Wait, valid once done is closed
}

// Start runs bin with args and env (NAME=value; PATH is added), its
// stdout and stderr kept. A cancelled ctx kills it.
func Start(ctx context.Context, bin string, env []string, args ...string) (*Proc, error) {
	p := &Proc{Cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.Cmd.Env = append(slices.Clip(env), "PATH="+os.Getenv("PATH"))
	p.Cmd.Stdout, p.Cmd.Stderr = &p.out, &p.out
	if err := p.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	stop := context.AfterFunc(ctx, func() { _ = p.Cmd.Process.Kill() })
	go func() {
		<-p.done
		stop()
	}()
	return p, nil
}

// Done is closed once the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the process and returns its exit code, or minus the
// signal that ended it (-1000: it could not be read).
func (p *Proc) Wait() int {
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

// Pid is the process's id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Output is what the process has written so far, stdout and stderr.
func (p *Proc) Output() string { return p.out.String() }

// Buffer is a bytes.Buffer a process writes while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// EnvCrawlerBin names the environment variable through which make test
// hands the packages that run the crawler as a child process (cmd/crawler,
// output/export, pipeline, testkit/bench, testkit/sim) one binary it built
// from the tree under test, without -race like theirs: otherwise each links
// its own, and in a fresh clone the five go builds compile the same
// packages at the same time.
const EnvCrawlerBin = "CRAWLER_TEST_BIN"

// PrebuiltCrawler is the crawler binary named by CRAWLER_TEST_BIN, or ""
// when it is unset and the caller builds its own.
func PrebuiltCrawler() string { return os.Getenv(EnvCrawlerBin) }

var (
	crawlerOnce sync.Once
	crawlerPath string
	crawlerErr  error
)

// TB is the part of testing.TB that Crawler uses (no import of testing
// into the harnesses' binaries).
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Crawler is the crawler binary built without the race detector, whatever
// the test's build: the one CRAWLER_TEST_BIN names, else one go build of
// the tree's cmd/crawler, once per test process.
func Crawler(t TB) string {
	t.Helper()
	crawlerOnce.Do(func() {
		if crawlerPath = PrebuiltCrawler(); crawlerPath != "" {
			return
		}
		dir, err := os.MkdirTemp("", "crawler-test-bin-")
		if err != nil {
			crawlerErr = err
			return
		}
		crawlerPath = filepath.Join(dir, "crawler")
		if out, err := exec.Command("go", "build", "-o", crawlerPath, "github.com/socialcrawl/crawler/cmd/crawler").CombinedOutput(); err != nil {
			crawlerErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if crawlerErr != nil {
		t.Fatal(crawlerErr)
	}
	return crawlerPath
}
