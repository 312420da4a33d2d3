package kinds

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/sources"
)

// Seeds are where a run starts: one list per platform, each field
// declared beside the kind whose seeds it holds (kinds_<platform>.go).
type Seeds struct {
	ShortVideo  ShortVideoSeeds  `yaml:"shortvideo" json:"shortvideo"`
	PhotoSocial PhotoSocialSeeds `yaml:"photosocial" json:"photosocial"`
	// Files are the seed lists read from files (the X_file keys), by the
	// key of the list each adds to, e.g. "seeds.shortvideo.profiles"
	// (seedfile.go).
	Files map[string]*SeedFile `yaml:"-" json:"files,omitempty"`
}

// Caps of seed values (docs/jobfile.md).
const (
	MaxNameBytes    = 1000 // ids (and the job's name and key_env)
	MaxKeywordBytes = 500  // keyword, hashtag, top and reels searches
)

// maxHandleBytes caps a handle (after its @).
const maxHandleBytes = 64

var handleRe = regexp.MustCompile(`^[A-Za-z0-9._]{1,64}$`)

// The checks of seed values shared by kinds. Each says what is wrong with
// v, "" when nothing; quoted prefixes the value to the message.

func quoted(check func(string) string) func(string) string {
	return func(v string) string {
		if msg := check(v); msg != "" {
			return yamlstrict.QuoteShort(v) + " " + msg
		}
		return ""
	}
}

var checkHandle = quoted(func(v string) string {
	if h := sources.NormalizeHandle(v); len(h) > maxHandleBytes {
		return fmt.Sprintf("is %d bytes long; a handle is at most %d", len(h), maxHandleBytes)
	} else if !handleRe.MatchString(h) {
		return "is not a handle (letters, digits, . and _, optionally after @)"
	}
	return ""
})

var checkSearch = quoted(func(v string) string {
	if strings.TrimSpace(v) == "" {
		return "is empty"
	}
	if len(v) > MaxKeywordBytes {
		return fmt.Sprintf("is %d bytes long; a search is at most %d", len(v), MaxKeywordBytes)
	}
	return ""
})

var checkPostURL = quoted(func(v string) string {
	if len(v) > sources.MaxURLBytes {
		return fmt.Sprintf("is %d bytes long; a URL is at most %d", len(v), sources.MaxURLBytes)
	}
	_, _, why := mediaOf(v)
	return why
})

// The task keys of seed values shared by kinds.
var (
	handleTasks = seedKey(sources.NormalizeHandle)
	searchTasks = seedKey(strings.TrimSpace)
	asIsTasks   = seedKey(func(v string) string { return v })
)
