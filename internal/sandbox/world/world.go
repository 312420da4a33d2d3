package world

import (
	"encoding/base64"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
)

// World derives every answer from hashes of the request's entity key and an
// index, so it needs no storage, costs O(page) per page and is safe for
// concurrent use (it is never mutated after New).
type World struct {
	pageSize int64
	day      int64  // the world clock in days
	churn    bool   // a churn world (not ChurnLinear)
	laws     string // which: ChurnHeavyTail, ChurnBursts, ChurnDrift or ChurnContent
	content  bool   // ChurnContent: comments and replies change too
}

// New is the world of page size pageSize at day day, changing from day to
// day as churn (ChurnLinear or one of the churn worlds) says.
func New(pageSize int, day int64, churn string) *World {
	return &World{pageSize: int64(pageSize), day: day, churn: churn != ChurnLinear, laws: churn, content: churn == ChurnContent}
}

// WorldEpoch is the Unix time of day 0 of the world clock
// (2025-01-01T00:00:00Z). "Now" in the world is WorldEpoch + day*86400.
const WorldEpoch int64 = 1735689600

// Now is the world's Unix time: the start of the current world day.
func (w *World) Now() int64 { return WorldEpoch + w.day*86400 }

// Day is the world's day.
func (w *World) Day() int64 { return w.day }

// Page cuts a list of total items at offset into a page of the world's
// page size.
func (w *World) Page(offset, total int64) Window { return Paginate(offset, total, w.pageSize) }

// FNV-1a 64-bit constants.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// Hash is H, the hash every answer and fault of the sandbox derives from
// (hashOf).
func Hash(parts ...string) uint64 { return hashOf(parts...) }

// hashOf is H: FNV-1a 64 over each part followed by a NUL byte, finished
// with mix64. The separator keeps ("ab","c") and ("a","bc") apart; mix64
// spreads FNV's weak low bits, which otherwise make H % 3 nearly constant
// for keys differing in their last byte. Tests can recompute it with
// hash/fnv (writing part+"\x00" for each part) and mix64.
func hashOf(parts ...string) uint64 {
	h := fnvOffset
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= fnvPrime
		}
		h *= fnvPrime // the NUL separator: h ^= 0 is a no-op
	}
	return mix64(h)
}

// mix64 is the SplitMix64 finalizer: a bijection on uint64, so
// mix64(seed+i) never repeats within a list.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// pick is a fixed hash-derived value in [0, mod).
func pick(kind, key, field string, mod uint64) int64 {
	return int64(hashOf(kind, key, field) % mod)
}

// rate is the daily growth of a counter: 1 + H(kind,key,field+".rate") % mod,
// at least 1 so two world times always give different values.
func rate(kind, key, field string, mod uint64) int64 {
	return 1 + int64(hashOf(kind, key, field+".rate")%mod)
}

// grow is a drifting counter: base + rate*WorldTime with
// base = H(kind,key,field) % baseMod.
func (w *World) grow(kind, key, field string, baseMod, rateMod uint64) int64 {
	return pick(kind, key, field, baseMod) + rate(kind, key, field, rateMod)*w.day
}

// handleAt is the i-th hashed handle of a list: "u" + 16 hex digits of
// mix64(seed+i). Distinct within a list, and never a token.
func handleAt(seed uint64, i int64) string {
	// By hand, not fmt.Sprintf("u%016x"): every entry of every list served
	// passes here, and fmt cost a fifth of the sandbox's tests' CPU.
	const hex = "0123456789abcdef"
	var b [17]byte
	b[0] = 'u'
	for j, v := 16, mix64(seed+uint64(i)); j >= 1; j, v = j-1, v>>4 {
		b[j] = hex[v&15]
	}
	return string(b[:])
}

const e18 = 1_000_000_000_000_000_000

// mix60 is a bijection on 60-bit values (xorshift and odd multiplications
// modulo 2^60 are each invertible).
func mix60(x uint64) uint64 {
	const mask = 1<<60 - 1
	x &= mask
	x ^= x >> 31
	x = (x * 0x7fb5d329728ea185) & mask
	x ^= x >> 27
	x = (x * 0x81dadef4bc2dd44d) & mask
	x ^= x >> 33
	return x
}

// perm18 is a bijection on [0, 10^18): mix60 with cycle walking.
func perm18(x uint64) uint64 {
	x = mix60(x)
	for x >= e18 {
		x = mix60(x)
	}
	return x
}

// digitsAt is the i-th 19-digit id of a list: lead digit then 18 digits of
// perm18((seed+i) mod 10^18). Distinct within a list and no leading zero.
// i may be negative: entries added at the head after day 0 (see headIndex).
func digitsAt(lead byte, seed uint64, i int64) string {
	m := uint64((i%e18 + e18) % e18)
	v := perm18((seed%e18 + m) % e18) // < 10^18: 18 digits with leading zeros
	var b [19]byte
	b[0] = lead
	for j := 18; j >= 1; j, v = j-1, v/10 {
		b[j] = byte('0' + v%10)
	}
	return string(b[:])
}

// headIndex is the growth law of lists: a list that gains g entries per
// world day at its head shows, at position p (0 = first, the newest), the
// entry of index p - g*day. Indexes >= 0 are the entries of day 0 (so
// position p at day 0 is entry p, as before growth existed); index -1 is
// the first entry added after day 0, -g*d the last one added by day d.
// Generators take the index modulo 2^64 (handleAt) or 10^18 (digitsAt), so
// an entry keeps its identity while the list grows in front of it.
func (w *World) headIndex(p, g int64) int64 { return p - g*w.day }

// splitTokens splits s on '_' and on any rune of extra.
func splitTokens(s, extra string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == '_' || strings.ContainsRune(extra, r)
	})
}

// countToken returns N from the first token that is letter followed by 1 to
// 15 decimal digits (e.g. "f120").
func countToken(toks []string, letter byte) (int64, bool) {
	for _, t := range toks {
		if len(t) < 2 || len(t) > 16 || t[0] != letter {
			continue
		}
		n, ok := api.ParseDigits(t[1:])
		if ok {
			return n, true
		}
	}
	return 0, false
}

// growthToken is N of a token r<N>: N entries added per world day at the
// head of each growing list of the entity (followers and following of an
// account, comments of a post, videos of a song).
func growthToken(toks []string) (int64, bool) { return countToken(toks, 'r') }

func hasToken(toks []string, word string) bool {
	for _, t := range toks {
		if t == word {
			return true
		}
	}
	return false
}

// Account is the model behind a handle, shared by both platforms.
type Account struct {
	Handle    string
	Private   bool
	Business  bool
	Live      bool
	endless   bool
	loop      bool
	emptyMore bool
	Followers int64 // list lengths at the world's day
	Following int64
	// churn: the heavytail world's laws rule this account (no r<N> token).
	churn bool
	// The laws of the lists and the lists at the world's day.
	followersLaw, followingLaw   followLaw
	followersList, followingList followState
}

// Account applies the handle grammar: prefix "missing" -> not found,
// prefix "private" -> private, tokens f<N>, g<N>, business, live, endless,
// loop, emptymore. Handles are case-sensitive.
func (w *World) Account(handle string) (Account, error) {
	if strings.HasPrefix(handle, "missing") {
		return Account{}, api.NotFound("account not found")
	}
	toks := splitTokens(handle, "")
	a := Account{
		Handle:    handle,
		Private:   strings.HasPrefix(handle, "private"),
		Business:  hasToken(toks, "business"),
		Live:      hasToken(toks, "live"),
		endless:   hasToken(toks, "endless"),
		loop:      hasToken(toks, "loop"),
		emptyMore: hasToken(toks, "emptymore"),
	}
	// Day 0 lengths: f<N> / g<N>, else hash-derived. Growth: r<N> on both
	// lists; else, in the heavytail world, the churn laws (churn.go); else
	// the hash-derived followers grow by their counter's rate and
	// everything else does not grow.
	fl, gl := followLaw{}, followLaw{}
	if n, ok := countToken(toks, 'f'); ok {
		fl.day0 = n
	} else {
		fl.day0 = pick("account", handle, "followers", 300)
		fl.fixed = rate("account", handle, "followers", 5)
	}
	if n, ok := countToken(toks, 'g'); ok {
		gl.day0 = n
	} else {
		gl.day0 = pick("account", handle, "following", 150)
	}
	r, tokenGrowth := growthToken(toks)
	switch {
	case tokenGrowth:
		fl.fixed, gl.fixed = r, r
	case w.churn:
		a.churn = true
		fl = newFollowLaw(handle, "followers", fl.day0, followersMix)
		gl = newFollowLaw(handle, "following", gl.day0, followingMix)
		if w.laws == ChurnBursts || w.laws == ChurnDrift {
			wildLaws(w.laws, handle, &fl, &gl)
		}
	}
	a.followersLaw, a.followingLaw = fl, gl
	a.followersList, a.followingList = fl.at(w.day), gl.at(w.day)
	a.Followers, a.Following = a.followersList.length(), a.followingList.length()
	return a, nil
}

// secUIDPrefix is what real secUids start with; the rest is the handle.
const secUIDPrefix = "MS4wLjABAAAA"

// SecUID is the secUid of handle: the prefix and the handle in base64.
func SecUID(handle string) string {
	return secUIDPrefix + base64.RawURLEncoding.EncodeToString([]byte(handle))
}

// handleOfSecUID inverts SecUID; ok is false for anything SecUID cannot
// produce from a valid handle.
func HandleOfSecUID(secUID string) (string, bool) {
	rest, ok := strings.CutPrefix(secUID, secUIDPrefix)
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) == 0 || b[0] == '@' {
		return "", false
	}
	return string(b), true
}

// Nickname and Verified depend only on the handle, so every list that shows
// an account agrees with its profile.
func Nickname(handle string) string {
	h := hashOf("account", handle, "nickname")
	return firstNames[h%uint64(len(firstNames))] + " " + lastNames[(h>>32)%uint64(len(lastNames))]
}

func Verified(handle string) bool { return pick("account", handle, "verified", 20) == 0 }

// KeywordOf normalizes a search term: lower case, single spaces. Searches
// are case-insensitive, so "Cats" and "cats" give the same results.
func KeywordOf(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// searchTotal is the number of results of a search: 0 for a keyword starting
// with "missing", N for a token n<N> (split on spaces and '_'), else
// H("search", kind, keyword) % mod.
func searchTotal(kind, kw string, mod uint64) int64 {
	if strings.HasPrefix(kw, "missing") {
		return 0
	}
	if n, ok := countToken(splitTokens(kw, " "), 'n'); ok {
		return n
	}
	return int64(hashOf("search", kind, kw) % mod)
}

var itoa = api.Itoa
