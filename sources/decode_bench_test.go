package sources_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// sandboxBody is the body the sandbox answers to a GET of pathQuery.
func sandboxBody(b *testing.B, pathQuery string) []byte {
	b.Helper()
	const key = "sk-bench"
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{key}})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/api"+pathQuery, nil)
	req.Header.Set("x-api-key", key)
	rec := httptest.NewRecorder()
	sb.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("sandbox %s: %d %s", pathQuery, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

// BenchmarkDecodeFollowersPage decodes a followers page of 50 entries as
// the client does (envelope, list, each entry tolerantly).
func BenchmarkDecodeFollowersPage(b *testing.B) {
	secUID := "MS4wLjABAAAA" + base64.RawURLEncoding.EncodeToString([]byte("bench_f100000_g0"))
	body := sandboxBody(b, "/shortvideo/user/followers?secUid="+secUID+"&cursor=500")
	b.SetBytes(int64(len(body)))
	entries := 0
	for b.Loop() {
		p, err := sources.DecodePage[endpoints.SVFollowEntry](sources.NewAnswer(body), "followers", "users", "user_list")
		if err != nil {
			b.Fatal(err)
		}
		entries += len(p.Items)
	}
	b.ReportMetric(float64(entries)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkDecodeProfile decodes a profile body.
func BenchmarkDecodeProfile(b *testing.B) {
	body := sandboxBody(b, "/shortvideo/profile?handle=bench_creator_f1200_g80")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var p endpoints.SVProfile
		if err := sources.DecodeObject(sources.NewAnswer(body), &p, &p.Raw, &p.Credits); err != nil {
			b.Fatal(err)
		}
	}
}
