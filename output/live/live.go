// Package live draws a run's progress as one status line that redraws in
// place on a terminal (crawler run, when stderr is a terminal): credits
// billed against the budget, pages/s, requests in flight against the
// adaptive limit and why it last moved, tasks by state, 429s and pauses,
// elapsed time and an estimate of what remains. Log lines written through
// Line.Writer clear the status line, print, and redraw it beneath them.
//
// Off a terminal the crawler logs periodic progress lines instead (see
// pipeline.ProgressIntervalDefault).
package live

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
)

// Terminal reports whether w is a terminal, and its width function.
func Terminal(w io.Writer) (ok bool, width func() int) {
	f, isFile := w.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) {
		return false, nil
	}
	return true, func() int {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
		return 80
	}
}

// ANSI sequences: carriage return, then erase to the end of the line.
const clearLine = "\r\x1b[K"

// Line is the status line on a terminal; it implements pipeline.Observer.
type Line struct {
	mu    sync.Mutex
	out   io.Writer
	width func() int
	last  string // the line on screen, "" when none
	done  bool
	// first is the run's count of ended tasks when this process started,
	// for the estimate.
	first *int64
}

// New returns a Line drawing on out, a terminal width() columns wide.
func New(out io.Writer, width func() int) *Line {
	return &Line{out: out, width: width}
}

// Request implements pipeline.Observer; the line reads the progress.
func (l *Line) Request(sources.Outcome) {}

// PageCommitted implements pipeline.Observer.
func (l *Line) PageCommitted(int, time.Duration) {}

// Progress implements pipeline.Observer: it redraws the line; the final
// progress is drawn once more and ends the line.
func (l *Line) Progress(p pipeline.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	if l.first == nil && !p.Run.At.IsZero() {
		n := p.Run.Done + p.Run.Failed + p.Run.Skipped
		l.first = &n
	}
	l.last = l.fit(l.render(p))
	fmt.Fprint(l.out, clearLine+l.last)
	if p.Final {
		fmt.Fprint(l.out, "\n")
		l.last, l.done = "", true
	}
}

// Writer returns a writer for log lines: each write clears the status
// line, prints, and redraws the status line under it.
func (l *Line) Writer() io.Writer { return lineWriter{l} }

type lineWriter struct{ l *Line }

func (w lineWriter) Write(b []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if w.l.last == "" {
		return w.l.out.Write(b)
	}
	if _, err := io.WriteString(w.l.out, clearLine); err != nil {
		return 0, err
	}
	n, err := w.l.out.Write(b)
	if err == nil {
		_, err = io.WriteString(w.l.out, w.l.last)
	}
	return n, err
}

// fit cuts s to the terminal's width less one column (a line that fills
// the last column wraps on some terminals, and \r then redraws below).
func (l *Line) fit(s string) string {
	w := 80
	if l.width != nil {
		w = l.width()
	}
	w = max(w-1, 10)
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	return string(r[:w-1]) + "…"
}

// render is the status line for p.
func (l *Line) render(p pipeline.Progress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d", p.RunID)
	if p.Final {
		fmt.Fprintf(&b, " %s", p.State)
	}
	f := p.Run
	if f.MaxCredits != nil && *f.MaxCredits > 0 {
		fmt.Fprintf(&b, " | credits %d/%d %s %d%%", f.CreditsBilled, *f.MaxCredits, bar(f.CreditsBilled, *f.MaxCredits, 10), f.CreditsBilled*100 / *f.MaxCredits)
	} else {
		fmt.Fprintf(&b, " | credits %d (no cap)", f.CreditsBilled)
	}
	if r := f.CreditsReserved(); r > 0 {
		fmt.Fprintf(&b, " +%d held", r)
	}
	secs := p.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.Pages) / secs
	}
	fmt.Fprintf(&b, " | %.1f pages/s", rate)
	if cs := p.Concurrency; cs.Limit > 0 {
		fmt.Fprintf(&b, " | in flight %d/%d", cs.InFlight, cs.Limit)
		if cs.Last.Reason != "" {
			fmt.Fprintf(&b, " (%s)", cs.Last)
		}
	}
	fmt.Fprintf(&b, " | tasks %d done %d pending %d failed", f.Done, f.Pending+f.Leased, f.Failed)
	if f.Skipped > 0 {
		fmt.Fprintf(&b, " %d skipped", f.Skipped)
	}
	fmt.Fprintf(&b, " | 429s %d", p.RateLimited)
	switch {
	case p.Pauses.OutageNow:
		fmt.Fprintf(&b, " | UPSTREAM DOWN, paused %s", dur(p.Pauses.Outage))
	case p.Pauses.RateLimitedNow:
		fmt.Fprintf(&b, " | PAUSED (429), paused %s", dur(p.Pauses.RateLimited))
	case p.Pauses.RateLimited+p.Pauses.Outage > 0:
		fmt.Fprintf(&b, " | paused %s", dur(p.Pauses.RateLimited+p.Pauses.Outage))
	}
	fmt.Fprintf(&b, " | %s", dur(p.Elapsed))
	if !p.Final {
		fmt.Fprintf(&b, ", %s", l.eta(p))
	}
	return b.String()
}

// eta estimates the time left: from the credits left when the budget binds
// (at the rate credits are billed), else from the tasks left at the rate
// this process has seen tasks end. Tasks found later make it grow.
func (l *Line) eta(p pipeline.Progress) string {
	f := p.Run
	secs := p.Elapsed.Seconds()
	if f.At.IsZero() || secs < 1 {
		return "~? left"
	}
	left := f.Pending + f.Leased
	if left == 0 {
		return "finishing"
	}
	var est float64 = -1
	if ended := f.Done + f.Failed + f.Skipped - *l.first; ended > 0 {
		est = float64(left) / (float64(ended) / secs)
	}
	if f.MaxCredits != nil && p.Billed > 0 {
		byCredits := float64(max(*f.MaxCredits-f.CreditsBilled, 0)) / (float64(p.Billed) / secs)
		if est < 0 || byCredits < est {
			est = byCredits
		}
	}
	if est < 0 {
		return "~? left"
	}
	return "~" + dur(time.Duration(est*float64(time.Second))) + " left"
}

// bar is a bar of width cells filled in the ratio n/of.
func bar(n, of int64, width int) string {
	fill := int(min(max(n*int64(width)/of, 0), int64(width)))
	return "[" + strings.Repeat("#", fill) + strings.Repeat(".", width-fill) + "]"
}

// dur prints d to the second (to the minute past an hour).
func dur(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}
