package frontier

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/socialcrawl/crawler/internal/db"
)

func TestCleanReason(t *testing.T) {
	t.Parallel()
	for _, pad := range []int{0, 1, 2, 3} {
		// A 2-, 3- or 4-byte character straddling the cut.
		for _, r := range []string{"é", "€", "😀"} {
			s := strings.Repeat("a", MaxReasonBytes-4+pad) + strings.Repeat(r, 10)
			got := CleanReason(s)
			if !utf8.ValidString(got) || len(got) > MaxReasonBytes || !strings.HasSuffix(got, "...") {
				t.Errorf("pad %d %q: %d bytes, valid %v, %q", pad, r, len(got), utf8.ValidString(got), got[len(got)-8:])
			}
		}
	}
	if got := CleanReason("a\x00b\xffc"); got != "ab\uFFFDc" {
		t.Errorf("CleanReason = %q", got)
	}
	if got := CleanReason("short é"); got != "short é" {
		t.Errorf("CleanReason = %q", got)
	}
}

func TestIsDataError(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]bool{
		"54000": true, "22021": true, "23505": true, "22003": true, "42P01": true,
		"40001": false, "40P01": false, "08006": false, "57P01": false, "57014": false, "53100": false, "XX000": false,
		db.NotAdvancedCode: false,
	} {
		if got := db.IsData(&pgconn.PgError{Code: code}); got != want {
			t.Errorf("db.IsData(%s) = %v, want %v", code, got, want)
		}
	}
}
