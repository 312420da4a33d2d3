//go:build !race

package pipeline

// raceFactor: see race_on_test.go.
const raceFactor = 1
