package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/childproc"
)

// TestSandboxPreset starts `crawler sandbox --preset scrapecreators` and
// asks it for a profile at the real path.
func TestSandboxPreset(t *testing.T) {
	t.Parallel()
	if r := invoke(t, nil, "sandbox", "--preset", "nope", "--api-key", "k"); r.code != exitUsage || !strings.Contains(r.stderr, "Preset") {
		t.Errorf("bad preset: %+v", r)
	}
	if r := invoke(t, nil, "sandbox", "--help"); !strings.Contains(r.stdout, "-preset") || !strings.Contains(r.stdout, "-churn") {
		t.Errorf("--help does not name --preset and --churn: %s", r.stdout)
	}
	if r := invoke(t, nil, "sandbox", "--churn", "bursty", "--api-key", "k"); r.code != exitUsage || !strings.Contains(r.stderr, "Churn") {
		t.Errorf("bad churn: %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out childproc.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, []string{"sandbox", "--preset", "scrapecreators", "--addr", "127.0.0.1:0", "--api-key", "k"},
			&cliEnv{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }})
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("sandbox exited %d", code)
		}
	}()
	addr := regexp.MustCompile(`http://(\S+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = "http://" + m[1]
		}
	}
	if base == "" || strings.HasSuffix(base, "/api") {
		t.Fatalf("serving line %q", out.String())
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/tiktok/profile?handle=alice", nil)
	req.Header.Set("x-api-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"uniqueId":"alice"`) {
		t.Errorf("profile: %d %s", resp.StatusCode, body)
	}
}
