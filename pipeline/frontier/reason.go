package frontier

import (
	"strings"
	"unicode/utf8"
)

// MaxReasonBytes bounds every reason the crawler stores (crawl.tasks.reason,
// drop_reason, crawl.runs.stop_reason) or prints.
const MaxReasonBytes = 1000

// CleanReason makes s storable and printable as a reason: valid UTF-8
// (invalid bytes become U+FFFD), no NUL (PostgreSQL text cannot hold one),
// and at most MaxReasonBytes bytes, cut on a rune boundary with "..." so a
// multi-byte character is never split. A cut or invalid reason refused by
// the database (22021) would otherwise stop the run.
func CleanReason(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= MaxReasonBytes {
		return s
	}
	const ell = "..."
	cut := MaxReasonBytes - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}
