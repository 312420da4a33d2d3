package sinks

import "fmt"

// MaxKeyBytes caps the length in bytes of every identifier or key the
// crawler stores in an indexed column (handles, secUids, user, video, song,
// reel and highlight ids, hashtag names, shortcodes, query keys, task keys).
// A btree index entry cannot exceed about 2700 bytes (SQLSTATE 54000), and
// some indexes hold two such columns, so the cap sits well below half of
// that. The pipeline drops a list entry whose identifier is longer (counted
// in crawl.tasks.dropped) and fails a single-object task naming the field.
const MaxKeyBytes = 1000

// Unix-second range that to_timestamp accepts for timestamptz (4713 BC to
// 294276 AD), a little inside it.
const (
	minUnixTime = -210_866_803_200
	maxUnixTime = 9_224_318_015_999
)

// KeyError says why a value cannot be stored as a key.
type KeyError struct {
	Field string // as the upstream names it, e.g. "user.uniqueId"
	Len   int
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("%s is %d bytes, cap %d", e.Field, e.Len, MaxKeyBytes)
}

// CheckKey returns a *KeyError when value is too long to be a key.
func CheckKey(field, value string) error {
	if len(value) > MaxKeyBytes {
		return &KeyError{Field: field, Len: len(value)}
	}
	return nil
}

// CheckUnixTime returns an error when the Unix time t (seconds) is outside
// what a timestamptz column holds; 0 (stored as NULL) is fine.
func CheckUnixTime(field string, t int64) error {
	if t < minUnixTime || t > maxUnixTime {
		return fmt.Errorf("%s %d is out of the timestamp range", field, t)
	}
	return nil
}
