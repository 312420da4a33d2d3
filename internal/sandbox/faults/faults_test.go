package faults

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterDateRounding(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 300_000_000, time.UTC)
	for _, c := range []struct {
		wait time.Duration
		want string
	}{
		{200 * time.Millisecond, "Sat, 01 Mar 2025 12:00:01 GMT"},
		{700 * time.Millisecond, "Sat, 01 Mar 2025 12:00:01 GMT"},
		{701 * time.Millisecond, "Sat, 01 Mar 2025 12:00:02 GMT"},
	} {
		h := http.Header{}
		setRetryAfter(h, RetryAfterDate, now, c.wait)
		if got := h.Get("Retry-After"); got != c.want {
			t.Errorf("wait %v: %q, want %q", c.wait, got, c.want)
		}
		setRetryAfter(h, RetryAfterSeconds, now, c.wait)
		if got := h.Get("Retry-After"); got != "1" {
			t.Errorf("wait %v: %q seconds", c.wait, got)
		}
	}
}

func TestBucketEdges(t *testing.T) {
	t.Parallel()
	now := time.Now()
	bb := newBucketBook(1e-300, 1)
	if ok, _ := bb.take("k", now); !ok {
		t.Fatal("first token refused")
	}
	if ok, wait := bb.take("k", now); ok || wait != maxWait {
		t.Errorf("tiny rate: ok %v wait %v", ok, wait)
	}
	h := http.Header{}
	setRetryAfter(h, RetryAfterDate, now, maxWait)
	if _, err := http.ParseTime(h.Get("Retry-After")); err != nil {
		t.Errorf("date for the longest wait: %q", h.Get("Retry-After"))
	}
}
