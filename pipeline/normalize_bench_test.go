package pipeline

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sources"
)

// memoryTransport answers every request with one body, without a network.
type memoryTransport struct{ body []byte }

func (m memoryTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(m.body)), ContentLength: int64(len(m.body)), Request: r,
	}, nil
}

// BenchmarkNormalizeFollowersPage runs the followers handler on a page of
// 50 entries served from memory: the client's request path, decoding, and
// the page's rows (50 users, 50 edges) and child tasks.
func BenchmarkNormalizeFollowersPage(b *testing.B) {
	const key = "sk-bench"
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{key}})
	if err != nil {
		b.Fatal(err)
	}
	secUID := "MS4wLjABAAAA" + base64.RawURLEncoding.EncodeToString([]byte("bench_f100000_g0"))
	req := httptest.NewRequest(http.MethodGet, "/api/shortvideo/user/followers?secUid="+secUID+"&cursor=500", nil)
	req.Header.Set("x-api-key", key)
	rec := httptest.NewRecorder()
	sb.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("sandbox: %d", rec.Code)
	}
	job, err := jobfile.Parse("bench.yaml", []byte("name: bench\napi: {base_url: https://upstream.invalid/api}\n"+
		"seeds: {shortvideo: {profiles: [bench]}}\nexpand: {followers: {}, follower_profiles: {}}\n"))
	if err != nil {
		b.Fatal(err)
	}
	client, err := sources.New(sources.Config{Options: job.API.Options, APIKey: key,
		HTTPClient: &http.Client{Transport: memoryTransport{body: rec.Body.Bytes()}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rows := 0
	for b.Loop() {
		t := &kinds.Task{Kind: kinds.KindSVFollowers, Key: secUID, Params: map[string]string{"handle": "bench"}, MaxPages: 1000, Cursor: "500", Pages: 10}
		res, err := kinds.Of(kinds.KindSVFollowers).Fetch(ctx, client, nil, job, t)
		if err != nil {
			b.Fatal(err)
		}
		rows += res.Batch.Len()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
