package live

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
)

func ptr[T any](v T) *T { return &v }

// The line redraws in place (carriage return, erase to end of line), holds
// the figures, fits the terminal's width, and ends with a newline at the
// end of the run; log lines written meanwhile appear above it, and the line
// is redrawn beneath them.
func TestLineRedrawsInPlace(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	width := 200
	l := New(&buf, func() int { return width })
	at := time.Now()
	base := pipeline.Progress{RunID: 7, Elapsed: 10 * time.Second, Pages: 50, Billed: 50, RateLimited: 3, Rate: 8,
		Pauses: sources.Pauses{RateLimited: 4 * time.Second},
		Run:    pipeline.RunFigures{At: at, CreditsBilled: 0, MaxCredits: ptr[int64](1000), Pending: 100}}
	l.Progress(base) // the first figures: nothing ended yet
	p := base
	p.Elapsed = 20 * time.Second
	p.Pages, p.Billed = 100, 100
	p.Run = pipeline.RunFigures{At: at, CreditsBilled: 412, CreditsCommitted: 414, MaxCredits: ptr[int64](1000), Pending: 38, Leased: 2, Done: 20, Failed: 2}
	l.Progress(p)
	second := buf.String()[strings.LastIndex(buf.String(), "\r"):]
	want := "\r\x1b[Krun 7 | credits 412/1000 [####......] 41% +2 held | 5.0 pages/s | tasks 20 done 40 pending 2 failed | 429s 3 | paused 4s | 20s, ~36s left"
	if second != want {
		t.Errorf("line:\n got %q\nwant %q", second, want)
	}

	// A log line clears the status line, prints, and redraws it.
	buf.Reset()
	fmt.Fprint(l.Writer(), "level=WARN msg=\"task failed\"\n")
	if got := buf.String(); got != "\r\x1b[Klevel=WARN msg=\"task failed\"\n"+want[len("\r\x1b[K"):] {
		t.Errorf("log write: %q", got)
	}

	// A narrow terminal: the line is cut to width-1 columns.
	width = 40
	buf.Reset()
	p.Pauses.RateLimitedNow = true
	l.Progress(p)
	got := strings.TrimPrefix(buf.String(), "\r\x1b[K")
	if n := len([]rune(got)); n != 39 || !strings.HasSuffix(got, "…") {
		t.Errorf("narrow line (%d runes): %q", n, got)
	}

	// An outage shows, and the final line ends with a newline; nothing is
	// drawn after it.
	width = 200
	buf.Reset()
	p.Final, p.State = true, "stopped"
	p.Pauses = sources.Pauses{Outage: 90 * time.Second, OutageNow: true}
	l.Progress(p)
	l.Progress(p)
	if got := buf.String(); got != "\r\x1b[Krun 7 stopped | credits 412/1000 [####......] 41% +2 held | 5.0 pages/s | tasks 20 done 40 pending 2 failed | 429s 3 | UPSTREAM DOWN, paused 1m30s | 20s\n" {
		t.Errorf("final: %q", got)
	}
	buf.Reset()
	fmt.Fprint(l.Writer(), "after\n")
	if buf.String() != "after\n" {
		t.Errorf("log after the end: %q", buf.String())
	}
}

// The requests in flight show against the adaptive limit, with why it
// last moved once it has.
func TestLineShowsRequestsInFlight(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := New(&buf, func() int { return 300 })
	p := pipeline.Progress{RunID: 3, Elapsed: 10 * time.Second, Pages: 40,
		Concurrency: concurrency.Status{Limit: 16, InFlight: 11}}
	l.Progress(p)
	p.Concurrency = concurrency.Status{Limit: 45, InFlight: 44, Last: concurrency.Move{Reason: concurrency.ReasonLatency}}
	l.Progress(p)
	want := []string{
		"\r\x1b[Krun 3 | credits 0 (no cap) | 4.0 pages/s | in flight 11/16 | tasks 0 done 0 pending 0 failed | 429s 0 | 10s, ~? left",
		"\r\x1b[Krun 3 | credits 0 (no cap) | 4.0 pages/s | in flight 44/45 (latency down) | tasks 0 done 0 pending 0 failed | 429s 0 | 10s, ~? left",
	}
	if got := buf.String(); got != strings.Join(want, "") {
		t.Errorf("lines:\n got %q\nwant %q", got, strings.Join(want, ""))
	}
}

func TestLineWithoutBudget(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := New(&buf, func() int { return 300 })
	l.Progress(pipeline.Progress{RunID: 1, Elapsed: time.Second / 2})
	if got := buf.String(); got != "\r\x1b[Krun 1 | credits 0 (no cap) | 0.0 pages/s | tasks 0 done 0 pending 0 failed | 429s 0 | 1s, ~? left" {
		t.Errorf("%q", got)
	}
}
