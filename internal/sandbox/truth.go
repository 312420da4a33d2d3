package sandbox

import "github.com/socialcrawl/crawler/internal/sandbox/world"

// The churn worlds of Config.Churn and their ground truth, which package
// world defines (world/churn.go, world/churnworlds.go, world/truth.go):
// named here so a caller of the sandbox needs no other import.
const (
	ChurnLinear    = world.ChurnLinear
	ChurnHeavyTail = world.ChurnHeavyTail
	ChurnBursts    = world.ChurnBursts
	ChurnDrift     = world.ChurnDrift
	ChurnContent   = world.ChurnContent
	ChurnDefault   = world.ChurnDefault
)

// AccountTruth and ChurnDiff are what ChurnTruth and ChurnChanges answer;
// the rates (ChurnRates, their classes) are package world's.
type (
	AccountTruth = world.AccountTruth
	ChurnDiff    = world.ChurnDiff
)

// ChurnTruth is the account behind handle in the heavytail world at day
// (world.ChurnTruth).
func ChurnTruth(handle string, day int64) (AccountTruth, error) { return world.ChurnTruth(handle, day) }

// ChurnTruthIn is ChurnTruth in churn world churn.
func ChurnTruthIn(churn, handle string, day int64) (AccountTruth, error) {
	return world.ChurnTruthIn(churn, handle, day)
}

// ChurnChanges is what changed on handle's lists from day from to day to
// in the heavytail world (world.ChurnChanges).
func ChurnChanges(handle string, from, to int64) (ChurnDiff, error) {
	return world.ChurnChanges(handle, from, to)
}

// ChurnChangesIn is ChurnChanges in churn world churn.
func ChurnChangesIn(churn, handle string, from, to int64) (ChurnDiff, error) {
	return world.ChurnChangesIn(churn, handle, from, to)
}

// ChurnRatesOf is handle's true rates in the heavytail world.
func ChurnRatesOf(handle string) (world.ChurnRates, error) { return world.ChurnRatesOf(handle) }

// ChurnRatesIn is ChurnRatesOf in churn world churn.
func ChurnRatesIn(churn, handle string) (world.ChurnRates, error) {
	return world.ChurnRatesIn(churn, handle)
}

// The content world's ground truth (world/contenttruth.go): what the
// content endpoints serve at a day, and what changed between two days,
// list by list.
type (
	Content        = world.Content
	ContentVideo   = world.ContentVideo
	ContentComment = world.ContentComment
	ContentDiff    = world.ContentDiff
	ListChange     = world.ListChange
)

// The kinds of list a ListChange names.
const (
	ListVideoComments      = world.ListVideoComments
	ListCommentReplies     = world.ListCommentReplies
	ListPostComments       = world.ListPostComments
	ListPostCommentReplies = world.ListPostCommentReplies
)

// ContentAt is world churn at day, read as ground truth (world.ContentAt).
func ContentAt(churn string, day int64) (Content, error) { return world.ContentAt(churn, day) }

// CreatorContentChanges is what changed under handle's videos from day
// from to day to in world churn (world.CreatorContentChanges).
func CreatorContentChanges(churn, handle string, from, to int64) (ContentDiff, error) {
	return world.CreatorContentChanges(churn, handle, from, to)
}

// PostContentChanges is what changed under the post code from day from to
// day to in world churn (world.PostContentChanges).
func PostContentChanges(churn, code string, from, to int64) (ContentDiff, error) {
	return world.PostContentChanges(churn, code, from, to)
}
