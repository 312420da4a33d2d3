//go:build race

package jobfile

// raceFactor scales memory bounds measured under the race detector, whose
// shadow memory multiplies a heap's footprint.
const raceFactor = 5
