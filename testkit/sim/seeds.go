package sim

import (
	"fmt"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// seedKind is a seed list the generator may fill: adding a kind to the
// simulator is one entry here (its values), plus an entry in endpoints
// when the checkers should follow what its tasks buy.
type seedKind struct {
	key     string // the seed list, as under seeds: ("shortvideo.profiles")
	presets string // the only preset that serves it; "": both
	file    bool   // the list takes an X_file seed file
	// values are the seeds a scenario lists; each must be distinct across
	// the scenario (a handle is an account in the world).
	values func(g gen, p Profile, w World) []string
	// root is the item a seed value is (truth.go); nil: not followed.
	root func(value string) item
}

var seedKinds = []seedKind{
	{key: "shortvideo.profiles", file: true, values: svProfiles, root: profileItem},
	{key: "photosocial.posts", file: true, values: posts, root: commentsItem},
	{key: "photosocial.profiles", file: true, values: psProfiles, root: psProfileItem},
}

// svProfiles are 1..MaxSeeds accounts of the churn world: f<N> followers
// and g<M> following at day 0, changing by the heavy-tailed laws, or by
// r<K> a day (both lists, at their head); sometimes a missing (404),
// private (empty lists) or blocked (403 under the real preset) one.
func svProfiles(g gen, p Profile, _ World) []string {
	n := g.between(1, p.MaxSeeds)
	out := make([]string, 0, n)
	for i := range n {
		h := fmt.Sprintf("s%d_f%d_g%d", i, g.between(0, 40), g.between(0, 15))
		switch x := g.r.IntN(20); {
		case x < 3:
			h += fmt.Sprintf("_r%d", g.between(1, 5))
		case x == 3:
			h = "missing_" + h
		case x == 4:
			h = "private_" + h
		case x == 5:
			h = "blocked_" + h
		}
		out = append(out, h)
	}
	return out
}

// posts are 0..2 posts of c<N> comments, some growing by r<K> a day.
func posts(g gen, _ Profile, w World) []string {
	n := []int{0, 0, 1, 2}[g.r.IntN(4)]
	out := make([]string, 0, n)
	for i := range n {
		code := fmt.Sprintf("p%d_c%d", i, g.between(0, 30))
		if g.chance(0.4) {
			code += fmt.Sprintf("_r%d", g.between(1, 4))
		}
		if g.chance(0.1) {
			code = "blocked_" + code
		}
		out = append(out, postURL(w.Preset, code))
	}
	return out
}

// psProfiles are 0..2 photo-sharing accounts, sometimes private (a free
// answer).
func psProfiles(g gen, _ Profile, _ World) []string {
	n := []int{0, 0, 1, 2}[g.r.IntN(4)]
	out := make([]string, 0, n)
	for i := range n {
		h := fmt.Sprintf("ps%d_f%d", i, g.between(0, 500))
		if g.chance(0.2) {
			h = "private_" + h
		}
		out = append(out, h)
	}
	return out
}

// postURL is the address of post code on the preset's site (the real
// preset's answers take only the real site's).
func postURL(preset, code string) string {
	if preset == sandbox.PresetScrapeCreators {
		return "https://www.instagram.com/p/" + code + "/"
	}
	return "https://www.photosocial.example/p/" + code + "/"
}
