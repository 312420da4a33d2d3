//go:build !race

package jobfile

// raceFactor: see race_on_test.go.
const raceFactor = 1
