package faults

import "sync"

// creditBook is the credit balance of every key when credits are limited.
// A request holds a credit from the credit check until its status is
// written, and gets it back unless the answer is billable, so concurrent
// requests never spend more than the balance.
type creditBook struct {
	mu      sync.Mutex
	limited bool
	start   int64
	left    map[string]int64 // keys not yet seen have start
}

func newCreditBook(limited bool, start int64) *creditBook {
	return &creditBook{limited: limited, start: start, left: map[string]int64{}}
}

// balance is key's balance; b.mu is held.
func (b *creditBook) balance(key string) int64 {
	if v, ok := b.left[key]; ok {
		return v
	}
	return b.start
}

// hold takes one of key's credits. limited is false when credits are
// unlimited (nothing is held); ok is false when the balance is 0. left is
// the balance after the hold.
func (b *creditBook) hold(key string) (ok, limited bool, left int64) {
	if !b.limited {
		return true, false, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.balance(key)
	if v <= 0 {
		return false, true, 0
	}
	b.left[key] = v - 1
	return true, true, v - 1
}

// release gives back a credit taken by hold.
func (b *creditBook) release(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left[key] = b.balance(key) + 1
}

// add changes key's balance by n (the result is at least 0); no-op when
// credits are unlimited.
func (b *creditBook) add(key string, n int64) {
	if !b.limited {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left[key] = max(0, b.balance(key)+n)
}

// get is key's balance, and whether credits are limited at all.
func (b *creditBook) get(key string) (left int64, limited bool) {
	if !b.limited {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.balance(key), true
}

// holdMore takes n more of key's credits, for an answer that costs more than
// the one hold took: all of them, or none when the balance is short (ok
// false). left is the balance after. Always ok when credits are unlimited.
func (b *creditBook) holdMore(key string, n int64) (ok bool, left int64) {
	if !b.limited {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.balance(key)
	if v < n {
		return false, v
	}
	b.left[key] = v - n
	return true, v - n
}
