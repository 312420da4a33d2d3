//go:build race

package export

// largeRows is TestExportLarge's row count: smaller under the race
// detector, which slows the reading back (the export itself runs in the
// crawler binary, built without it).
const largeRows = 200_000
