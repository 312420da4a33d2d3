//go:build race

package pipeline

// raceFactor scales memory bounds measured under the race detector, whose
// shadow memory multiplies a heap's footprint.
const raceFactor = 5
