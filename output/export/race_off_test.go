//go:build !race

package export

// largeRows is TestExportLarge's row count (see race_on_test.go).
const largeRows = 500_000
