package sandbox_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// A handle's tokens fix what the sandbox answers: alice_f120 has exactly 120
// followers, so with pages of 50 the walk takes 3 requests.
func ExampleNew() {
	srv, err := sandbox.New(sandbox.Config{APIKeys: []string{"k1"}})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	secUID := "MS4wLjABAAAA" + base64.RawURLEncoding.EncodeToString([]byte("alice_f120"))
	cursor, followers := "", 0
	for {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/api/shortvideo/user/followers?secUid="+secUID+"&cursor="+cursor, nil)
		req.Header.Set("x-api-key", "k1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		var page struct {
			Followers []struct {
				UniqueID string `json:"uniqueId"`
			} `json:"followers"`
			Cursor  string `json:"cursor"`
			HasMore bool   `json:"hasMore"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			panic(err)
		}
		followers += len(page.Followers)
		if !page.HasMore {
			break
		}
		cursor = page.Cursor
	}
	u := srv.Usage("k1")
	fmt.Println("followers:", followers)
	fmt.Println("requests:", u.Requests, "billable:", u.Billable)
	// Output:
	// followers: 120
	// requests: 3 billable: 3
}

// A script fixes an endpoint's answers, so a test knows exactly what its
// client meets: here a 503, then a 429 (Retry-After: 1 without a bucket),
// then the real answer.
func ExampleFaults_script() {
	srv, err := sandbox.New(sandbox.Config{APIKeys: []string{"k1"}, Faults: sandbox.Faults{
		Script: map[string][]int{"/shortvideo/profile": {503, 429, sandbox.ScriptNormal}},
	}})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/api/shortvideo/profile?handle=alice", nil)
		req.Header.Set("x-api-key", "k1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Printf("%d Retry-After=%q\n", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	u := srv.Usage("k1")
	fmt.Println("requests:", u.Requests, "billable:", u.Billable, "errors:", u.Errors, "rate_limited:", u.RateLimited)
	// Output:
	// 503 Retry-After=""
	// 429 Retry-After="1"
	// 200 Retry-After=""
	// requests: 3 billable: 1 errors: 1 rate_limited: 1
}

// A benchmark scores what it saw on night 30 against the heavytail world's
// truth: the edges that are new and gone since night 29, and the count the
// profile shows.
func ExampleChurnChanges() {
	night := int64(30)
	diff, err := sandbox.ChurnChanges("creator492", night-1, night)
	if err != nil {
		panic(err)
	}
	truth, err := sandbox.ChurnTruth("creator492", night)
	if err != nil {
		panic(err)
	}
	fmt.Printf("followers: %s at %.1f a day, unfollows: %s at %.1f\n", truth.Rates.Followers.Class, truth.Rates.Followers.PerDay,
		truth.Rates.FollowersLoss.Class, truth.Rates.FollowersLoss.PerDay)
	fmt.Printf("night %d: %d new, %d gone, %d in all; the list starts with the new: %v\n", night, len(diff.NewFollowers),
		len(diff.LostFollowers), truth.FollowerCount, truth.Followers[0] == diff.NewFollowers[0])
	// Output:
	// followers: moderate at 2.7 a day, unfollows: moderate at 2.4
	// night 30: 2 new, 3 gone, 193 in all; the list starts with the new: true
}
