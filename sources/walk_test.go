package sources

import "context"

// Walk fetches pages from the first one until NextStep stops, handing each to
// each. It returns the pages fetched and why the walk stopped. Only tests
// walk a list in one go (the pipeline commits page by page); it is here, in
// a test file, for this package's tests and sources_test's.
func Walk[T any](ctx context.Context, maxPages int, fetch func(ctx context.Context, cursor string) (*Page[T], error), each func(*Page[T]) error) (int, StopReason, error) {
	cursor := ""
	for pages := 1; ; pages++ {
		p, err := fetch(ctx, cursor)
		if err != nil {
			return pages - 1, "", err
		}
		if err := each(p); err != nil {
			return pages, "", err
		}
		if reason := NextStep(cursor, p.Info(), pages, maxPages); reason != "" {
			return pages, reason, nil
		}
		cursor = p.Cursor
	}
}
