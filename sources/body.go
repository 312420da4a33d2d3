package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"golang.org/x/sync/semaphore"
)

// Limits on what a body may contain, checked by one linear scan before any
// decoding (checkShape). Real bodies nest a dozen levels and carry numbers
// of at most ~20 characters; past these limits a body is hostile or broken,
// and the task fails with the reason (a billed answer that will not decode
// better next time).
const (
	// MaxNesting is the deepest nesting of objects and arrays accepted.
	MaxNesting = 64
	// MaxNumberLen is the longest number literal accepted, in characters.
	MaxNumberLen = 40
	// maxErrorBody is how much of a non-2xx body is read: enough for its
	// message and credit fields, and no more, whatever it claims.
	maxErrorBody = 64 << 10
)

// checkShape rejects a body nested deeper than MaxNesting or carrying a
// number literal longer than MaxNumberLen, in one pass over its bytes, so
// that neither the decoder's work nor big-number arithmetic can grow faster
// than the body.
func checkShape(body []byte) error {
	depth, num := 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if num > 0 {
			if c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				if num++; num > MaxNumberLen {
					return fmt.Errorf("number literal longer than %d characters at byte %d", MaxNumberLen, i)
				}
				continue
			}
			num = 0
		}
		switch {
		case c == '"':
			// Skip the string: its escapes cannot open anything.
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		case c == '{' || c == '[':
			if depth++; depth > MaxNesting {
				return fmt.Errorf("nested deeper than %d levels at byte %d", MaxNesting, i)
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || c >= '0' && c <= '9':
			num = 1
		}
	}
	return nil
}

// bodyBudget bounds the response-body bytes the process holds at once: a
// reader acquires its body's size before reading (the Content-Length; for a
// body of unknown length first 1 MiB, then, should it grow past that, the
// body cap), keeps what it read until the page is committed, and gives the
// rest back at once. A reader that must grow gives back what it holds
// before waiting for the cap, so readers never wait on each other in a
// cycle; the price is that each waiting reader holds up to 1 MiB outside
// the budget. See Config.MaxInflightBytes.
type bodyBudget struct {
	sem  *semaphore.Weighted
	size int64
}

// keep hands n bytes of b's budget to the lease, which gives them back
// once the page built from the body is committed (a nil lease at once).
func (b *bodyBudget) keep(l Lease, n int64) {
	if n > 0 {
		l.Hold(func() { b.sem.Release(n) })
	}
}

// errBodyTooLarge marks a body over the cap: it was read up to the cap only.
var errBodyTooLarge = errors.New("body too large")

// readBody reads a 2xx body of at most limit bytes into one buffer of its
// exact size (no doubling growth, no copy but the final assembly of a body
// of unknown length), with its size acquired from the budget first. It
// returns the bytes of budget it holds (len(body) on success).
func (b *bodyBudget) readBody(ctx context.Context, l Lease, resp *http.Response, limit int64) ([]byte, int64, error) {
	want := min(limit, unknownLengthFirst)
	if cl := resp.ContentLength; cl >= 0 {
		if cl > limit {
			return nil, 0, errBodyTooLarge
		}
		want = cl
	}
	want = min(max(want, 1), b.size)
	if err := b.acquire(ctx, l, want); err != nil {
		return nil, 0, err
	}
	grow := func() error {
		b.sem.Release(want)
		want = 0
		full := min(limit+1, b.size)
		if err := b.acquire(ctx, l, full); err != nil {
			return err
		}
		want = full
		return nil
	}
	body, err := readExact(resp.Body, resp.ContentLength, limit, want, grow)
	n := int64(len(body))
	if err != nil {
		n = 0
	}
	n = min(n, want)
	b.sem.Release(want - n)
	return body, n, err
}

// acquire takes n bytes of the budget. Before it waits, the lease's
// BeforeBudgetWait runs: a caller that holds budget it can give back gives
// it back, so that no reader waits on budget its own caller holds.
func (b *bodyBudget) acquire(ctx context.Context, l Lease, n int64) error {
	if b.sem.TryAcquire(n) {
		return nil
	}
	l.BeforeBudgetWait()
	return b.sem.Acquire(ctx, n)
}

// unknownLengthFirst is what a body of unknown length reserves first.
const unknownLengthFirst = 1 << 20

// readExact reads r to its end: into one buffer of size cl when the length
// is known, else chunk by chunk (each at most 1 MiB) then into one buffer of
// the total size. More than limit bytes is errBodyTooLarge.
//
// grow is called once, when a body of unknown length is about to pass
// allowed bytes, to reserve the rest up to the cap.
func readExact(r io.Reader, cl, limit, allowed int64, grow func() error) ([]byte, error) {
	if cl >= 0 {
		buf := make([]byte, cl)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	var chunks [][]byte
	var total int64
	size := int64(16 << 10)
	for {
		next := min(size, limit+1-total)
		if grow != nil && total+next > allowed {
			if err := grow(); err != nil {
				return nil, err
			}
			grow = nil
		}
		c := make([]byte, next)
		n, err := io.ReadFull(r, c)
		chunks = append(chunks, c[:n])
		total += int64(n)
		if total > limit {
			return nil, errBodyTooLarge
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(size*2, 1<<20)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	buf := make([]byte, 0, total)
	for _, c := range chunks {
		buf = append(buf, c...)
	}
	return buf, nil
}

// readErrorBody reads the start of a non-2xx body: its message and credit
// fields are all the client uses.
func readErrorBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxErrorBody))
	if err != nil {
		return nil, err
	}
	return body, nil
}
