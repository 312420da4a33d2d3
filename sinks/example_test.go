package sinks_test

import (
	"fmt"
	"net/url"

	"github.com/socialcrawl/crawler/sinks"
)

func ExampleQueryKey() {
	fmt.Println(sinks.QueryKey("  Funny   CATS ", nil))
	fmt.Println(sinks.QueryKey("funny cats", url.Values{"sort_by": {"most-liked"}, "region": {""}}))
	// Output:
	// funny cats
	// funny cats?sort_by=most-liked
}

func ExampleCommentKey() {
	code := sinks.PostCode("https://www.photosocial.example/p/ABC123/?igsh=x")
	fmt.Println(code)
	fmt.Println(sinks.CommentKey(code, "alice", 1735689600, "hello"))
	// Output:
	// ABC123
	// 2c6fda3561760e667fc2943499134ea68e54691cc76a1ff6b9df58ed43a43117
}

func ExampleHighlightID() {
	fmt.Println(sinks.HighlightID("highlight:17912345"))
	// Output: 17912345
}
