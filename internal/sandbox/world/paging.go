package world

import "math/bits"

// Window is one page of a list: items [Start, End), Next is the cursor
// returned (the offset just past the last item returned), More is hasMore.
type Window struct {
	Start, End, Next int64
	More             bool
}

// Paginate cuts a list of total items at offset. An offset past the end is
// accepted and gives an empty last page whose cursor is that offset.
func Paginate(offset, total, size int64) Window {
	if offset >= total {
		return Window{Start: offset, End: offset, Next: offset}
	}
	end := min(offset+size, total)
	return Window{Start: offset, End: end, Next: end, More: end < total}
}

// Len is the number of items of the page.
func (win Window) Len() int64 { return win.End - win.Start }

// permutation reorders [0, n) for the keyword search filters in O(1) per
// item, so a page of a huge result set stays cheap: a 4-round Feistel
// network on the smallest even bit width covering n, cycle-walked into
// [0, n). The zero key is the identity (the unfiltered rank).
type permutation struct {
	n    uint64
	half uint
	key  uint64
}

func newPermutation(n int64, key uint64) permutation {
	p := permutation{n: uint64(n), key: key}
	if n > 1 {
		w := uint(bits.Len64(uint64(n - 1)))
		p.half = max(1, (w+1)/2)
	}
	return p
}

func (p permutation) at(i int64) int64 {
	if p.key == 0 || p.n < 2 {
		return i
	}
	x := uint64(i)
	for {
		x = p.feistel(x)
		if x < p.n {
			return int64(x)
		}
	}
}

func (p permutation) feistel(x uint64) uint64 {
	mask := uint64(1)<<p.half - 1
	l, r := x>>p.half, x&mask
	for round := uint64(1); round <= 4; round++ {
		l, r = r, l^(mix64(p.key^round<<56^r)&mask)
	}
	return l<<p.half | r
}
