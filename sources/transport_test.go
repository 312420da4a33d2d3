package sources

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDefaultTransportSmallBuffers: the default client's connections keep
// 1 KiB buffers, not net/http's 4 KiB (one connection per request in
// flight over HTTP/1.1: workload 21's memory), and heads longer than that
// still pass both ways.
func TestDefaultTransportSmallBuffers(t *testing.T) {
	tr, ok := Config{}.withDefaults().HTTPClient.Transport.(*http.Transport)
	if !ok {
		t.Fatal("the default client's transport is not an *http.Transport")
	}
	if tr.ReadBufferSize != 1<<10 || tr.WriteBufferSize != 1<<10 {
		t.Fatalf("read/write buffers %d/%d bytes, want 1024/1024", tr.ReadBufferSize, tr.WriteBufferSize)
	}
	long := strings.Repeat("x", 3<<10)
	body := strings.Repeat("y", 5<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Long", r.Header.Get("X-Long"))
		_, _ = io.WriteString(w, r.URL.Query().Get("q")+body)
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"?q="+long, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Long", long)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("X-Long") != long || string(got) != long+body {
		t.Fatalf("header of %d bytes and body of %d, want %d and %d", len(resp.Header.Get("X-Long")), len(got), len(long), len(long+body))
	}
}
