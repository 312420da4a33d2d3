package pipeline

import (
	"context"
	"sync"

	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/sources"
)

// pageLease is what one page of a leased task may spend and must wait for,
// handed by the runner to the kind's call (sources.Lease), the way river
// hands a job executor its job and benthos an input its ack: the call's
// requests reserve and settle their credits in the budget, its bodies
// stay counted against the client's in-flight budget until the page
// commits, the body is archived when the job keeps pages, and every
// statement of the lease's own first reads the previous page's commit
// (prev), which was sent while this page was fetched.
type pageLease struct {
	budget *budget.Hold
	// reserved is what the page's request in flight took of the budget
	// (0: none): a retry whose answer was lost reuses it.
	reserved int64
	// prev is the previous page's commit, written and not read yet (nil:
	// none); it is read before a statement of the lease's own and before a
	// body read waits for budget prev's page holds.
	prev  *sentPage
	await func(*sentPage) error
	// archive: the job keeps pages; page is the body recorded.
	archive bool
	bodies  *bodyHold

	mu   sync.Mutex
	page *frontier.ArchivedPage
}

// bodyHold is a page's hold on the in-flight body budget, apart from its
// lease: the page's commit, sent while the next page is fetched, keeps the
// hold (to give it back once read) without keeping the lease, whose
// previous page would keep its own, and so on down the list.
type bodyHold struct {
	mu    sync.Mutex
	held  []func()
	freed bool
}

var _ sources.Lease = (*pageLease)(nil)

// awaitPrev is the lease's wait for prev's commit, nil when there is none.
func (l *pageLease) awaitPrev() func() error {
	if l.prev == nil {
		return nil
	}
	return func() error { return l.await(l.prev) }
}

// Reserve reserves the credits of the request about to be sent.
func (l *pageLease) Reserve(ctx context.Context, _ string, credits int) error {
	return l.budget.Reserve(ctx, &l.reserved, int64(credits), l.awaitPrev())
}

// Settle notes what the answer cost, for the budget to post.
func (l *pageLease) Settle(_ context.Context, o sources.Outcome) {
	l.budget.Settle(&l.reserved, o)
}

// Hold keeps a body counted against the in-flight budget until the page's
// hold is released.
func (l *pageLease) Hold(release func()) {
	h := l.bodies
	h.mu.Lock()
	if !h.freed {
		h.held = append(h.held, release)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	release()
}

// BeforeBudgetWait reads prev's commit, which gives back its page's bodies.
func (l *pageLease) BeforeBudgetWait() {
	if await := l.awaitPrev(); await != nil {
		_ = await()
	}
}

// Body keeps the answer, compressed, when the job archives pages. A kind
// fetches one object or page per task page: a second body replaces the
// first (it is the one mapped last).
func (l *pageLease) Body(endpoint, query string, body []byte) {
	if !l.archive {
		return
	}
	p := frontier.NewArchivedPage(endpoint, query, body)
	l.mu.Lock()
	l.page = p
	l.mu.Unlock()
}

// archived is the body recorded for the archive (nil: none).
func (l *pageLease) archived() *frontier.ArchivedPage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.page
}

// release gives back the page's bodies (after its commit, or when the page
// is given up). Idempotent.
func (h *bodyHold) release() {
	h.mu.Lock()
	held := h.held
	h.held, h.freed = nil, true
	h.mu.Unlock()
	for _, f := range held {
		f()
	}
}
