package endpoints

import "github.com/socialcrawl/crawler/sources"

// The tolerant types of package sources that the answers are written
// with, by their short names (the same types: a Text is a sources.Text).

type Text = sources.Text
type NullText = sources.NullText
type Int64 = sources.Int64
type Flag = sources.Flag
type UnixTime = sources.UnixTime
type Credits = sources.Credits
type RawRef = sources.RawRef
type Object[T any] = sources.Object[T]
