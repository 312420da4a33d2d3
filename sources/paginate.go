package sources

// StopReason says why a list ended; "" means it goes on.
type StopReason string

const (
	StopEnd              StopReason = "end"             // hasMore false, or no cursor to follow
	StopPageLimit        StopReason = "page_limit"      // the job's page limit for the list was reached
	StopRepeatedCursor   StopReason = "repeated_cursor" // the upstream sent back the cursor we sent
	StopEmptyWithHasMore StopReason = "empty_page_more" // an empty page that still claimed more
	StopEmptyPage        StopReason = "empty_page"      // an empty page on a list without hasMore
)

// PageInfo is what pagination needs to know of a page.
type PageInfo struct {
	Items        int
	Cursor       string
	HasMore      bool
	HasMoreKnown bool
}

// Info returns the pagination view of a page. Items counts the entries the
// upstream sent, dropped ones included.
func (p *Page[T]) Info() PageInfo {
	return PageInfo{Items: len(p.Items) + p.Dropped, Cursor: p.Cursor, HasMore: p.HasMore, HasMoreKnown: p.HasMoreKnown}
}

// NextStep decides whether a list goes on after a page fetched with cursor
// sent, when pagesDone pages (this one included) have been fetched and
// maxPages is the limit (0 = none). It is the single place where the loop
// protections live, shared by the pipeline and the tests' walks.
func NextStep(sent string, got PageInfo, pagesDone, maxPages int) StopReason {
	switch {
	case got.HasMoreKnown && !got.HasMore:
		return StopEnd
	case got.Cursor == "":
		return StopEnd
	case !got.HasMoreKnown && got.Items == 0:
		return StopEmptyPage
	case got.Items == 0:
		return StopEmptyWithHasMore
	case got.Cursor == sent:
		return StopRepeatedCursor
	case maxPages > 0 && pagesDone >= maxPages:
		return StopPageLimit
	}
	return ""
}
