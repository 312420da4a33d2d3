package real

import "testing"

func TestRoutes(t *testing.T) {
	t.Parallel()
	if len(routes) != 28 { // the contract's 18, and the real service's own 10
		t.Errorf("%d real routes, want 28", len(routes))
	}
}
