package world

// When a creator's videos and posts were posted: by their place in the
// creator's list, so a list newest first in order is newest first in time
// (date windows, issue 32, stop a walk at its first entry older than a
// date). The day-0 entries were posted one a day before WorldEpoch, index
// 0 the day before; the entries added since are spread over the days they
// were added, in order. A video or post is the same whichever answer shows
// it: the detail endpoints (a URL names the creator) find it in the list.

const daySeconds = int64(86400)

// maxTimeScan bounds the search of a creator's list for an entry.
const maxTimeScan = 100_000

// postedAt is when the entry at index i of the creator's list l was
// posted.
func (w *World) postedAt(l creatorList, i int64) int64 {
	if i >= 0 {
		return WorldEpoch - (i+1)*daySeconds
	}
	if l.added <= 0 || w.day <= 0 {
		return WorldEpoch
	}
	k := -i // 1: the first added after day 0
	return WorldEpoch + (k-1)*w.day*daySeconds/l.added
}

// creatorPost is the post at index i of handle's posts list l.
func (w *World) creatorPost(l creatorList, handle string, i int64) Post {
	p := w.post(postCodeAt(handle, i), handle)
	p.TakenAt = w.postedAt(l, i)
	return p
}

// creatorVideoTime is when video id was posted, when it is one of
// author's videos.
func (w *World) creatorVideoTime(author, id string) (int64, bool) {
	a, err := w.Account(author)
	if err != nil {
		return 0, false
	}
	l := w.videoList(a)
	seed := creatorVideoSeed(author)
	for p := range min(l.total(), maxTimeScan) {
		if i := l.index(p); digitsAt('7', seed, i) == id {
			return w.postedAt(l, i), true
		}
	}
	return 0, false
}

// creatorPostTime is when post code was taken, when it is one of owner's
// posts.
func (w *World) creatorPostTime(owner, code string) (int64, bool) {
	if owner == "" {
		return 0, false
	}
	a, err := w.Account(owner)
	if err != nil {
		return 0, false
	}
	l := w.postList(a)
	for p := range min(l.total(), maxTimeScan) {
		if i := l.index(p); postCodeAt(owner, i) == code {
			return w.postedAt(l, i), true
		}
	}
	return 0, false
}
