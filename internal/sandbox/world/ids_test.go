package world

import (
	"fmt"
	"testing"
)

// digitsAt and handleAt write their digits by hand: the strings are the
// ones fmt wrote (the world's ids must not move), leading zeros included.
func TestIDsAsFmtWroteThem(t *testing.T) {
	t.Parallel()
	for k := range uint64(2000) {
		s := k * 0x9e3779b97f4a7c15
		i := int64(k) - 1000
		m := uint64((i%e18 + e18) % e18)
		if got, want := digitsAt('7', s, i), "7"+fmt.Sprintf("%018d", perm18((s%e18+m)%e18)); got != want {
			t.Fatalf("digitsAt('7', %d, %d) = %q, want %q", s, i, got, want)
		}
		if got, want := handleAt(s, i), fmt.Sprintf("u%016x", mix64(s+uint64(i))); got != want {
			t.Fatalf("handleAt(%d, %d) = %q, want %q", s, i, got, want)
		}
	}
	if got := digitsAt('1', 0, 0); got != "1"+fmt.Sprintf("%018d", perm18(0)) {
		t.Fatalf("digitsAt('1', 0, 0) = %q", got)
	}
}
