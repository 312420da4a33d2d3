package sandbox

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

func TestChurnPoisson(t *testing.T) {
	t.Parallel()
	const n = 20_000
	for _, lambda := range []float64{0.05, 0.7, 4, 9.9, 10, 35, 200, 50_000} {
		p, r := newPoisson(lambda), rng{hashOf("test", "poisson", fmt.Sprint(lambda))}
		var sum, sq float64
		for range n {
			k := float64(p.draw(&r))
			if k < 0 {
				t.Fatalf("lambda %v: draw %v", lambda, k)
			}
			sum += k
			sq += k * k
		}
		mean := sum / n
		variance := sq/n - mean*mean
		// Both within about 5 standard errors of lambda.
		if d := math.Abs(mean - lambda); d > 5*math.Sqrt(lambda/n) {
			t.Errorf("lambda %v: mean %v", lambda, mean)
		}
		if d := math.Abs(variance - lambda); d > 5*lambda*math.Sqrt(2.0/n)+5*math.Sqrt(lambda/n) {
			t.Errorf("lambda %v: variance %v", lambda, variance)
		}
	}
}

// TestChurnDayZero: the two worlds are one at WorldTime 0, and the linear
// world is untouched by the option.
func TestChurnDayZero(t *testing.T) {
	t.Parallel()
	linear, heavy := setup(t, Config{}), setup(t, Config{Churn: ChurnHeavyTail})
	later := setup(t, Config{Churn: ChurnLinear, WorldTime: 9})
	laterDefault := setup(t, Config{WorldTime: 9})
	for _, h := range []string{"alice", "acct_f120_g30_r2", "private_x", "zed_live_business"} {
		for _, c := range []struct{ path, q string }{
			{"/shortvideo/profile", "handle=" + h},
			{"/photosocial/profile", "handle=" + h},
			{"/shortvideo/user/followers", "secUid=" + secUIDOf(h) + "&cursor=20"},
			{"/shortvideo/user/following", "secUid=" + secUIDOf(h)},
			{"/shortvideo/creators/popular", ""},
		} {
			_, a := linear.get(t, c.path, c.q)
			_, b := heavy.get(t, c.path, c.q)
			_, l1 := later.get(t, c.path, c.q)
			_, l2 := laterDefault.get(t, c.path, c.q)
			if !bytes.Equal(a, b) || !bytes.Equal(l1, l2) {
				t.Errorf("%s?%s: the worlds differ at day 0 (%v) or linear is not the default (%v)", c.path, c.q,
					!bytes.Equal(a, b), !bytes.Equal(l1, l2))
			}
		}
	}
}

func TestChurnConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{APIKeys: []string{"k"}, Churn: "bursty"}); err == nil {
		t.Error("Churn bursty accepted")
	}
}
