package world

import "strings"

// Vocabulary for generated text. Text is only ever derived from hashes, so
// its exact wording is not part of the documented world.
var (
	firstNames = []string{"Ava", "Leo", "Mila", "Noah", "Zoe", "Kai", "Iris", "Omar", "Lina", "Theo", "Maya", "Eli",
		"Nora", "Ravi", "Sana", "Jude", "Ines", "Yuki", "Aria", "Finn", "Luz", "Tom", "Ada", "Remy"}
	lastNames = []string{"Moreau", "Kim", "Silva", "Novak", "Okafor", "Berg", "Rossi", "Tanaka", "Haddad", "Walsh",
		"Ortiz", "Lund", "Costa", "Singh", "Meyer", "Ivanova"}
	words = []string{"sunset", "coffee", "dance", "street", "morning", "recipe", "travel", "ocean", "city", "music",
		"friends", "weekend", "garden", "puppy", "kitten", "workout", "pasta", "vintage", "neon", "rain",
		"mountain", "skate", "beach", "study", "night", "vibes", "challenge", "tutorial", "hack", "budget",
		"glow", "retro", "lofi", "road", "trip", "market", "sushi", "cozy", "autumn", "spring", "snow", "run",
		"yoga", "art", "paint", "sketch", "film", "story"}
	categories = []string{"Restaurant", "Artist", "Personal blog", "Shopping & retail", "Health/beauty",
		"Musician/band", "Public figure", "Education"}
)

// rng is a SplitMix64 stream for text, seeded from a hash.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

func (r *rng) word() string { return words[r.next()%uint64(len(words))] }

// sentence is lo to hi words, the first capitalized.
func sentence(seed uint64, lo, hi int) string {
	r := rng{seed}
	n := lo + int(r.next()%uint64(hi-lo+1))
	var b strings.Builder
	for i := range n {
		w := r.word()
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// slug keeps the lower-case letters and digits of s, for hashtag names and
// e-mail hosts.
func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}
