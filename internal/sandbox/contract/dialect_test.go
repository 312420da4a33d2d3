package contract

import "testing"

func TestWithCredits(t *testing.T) {
	t.Parallel()
	if got := string(withCredits([]byte("{}\n"), true, 3, 1)); got != `{"credits_remaining":3,"credits_charged":1}`+"\n" {
		t.Errorf("withCredits on {}: %s", got)
	}
}

// Every endpoint of upstream-api.md is routed, each once (route panics on a
// second registration when the package loads).
func TestEveryEndpointRouted(t *testing.T) {
	t.Parallel()
	if n := len(routes); n != 18 {
		t.Errorf("%d endpoints routed, want the 18 of upstream-api.md", n)
	}
}
