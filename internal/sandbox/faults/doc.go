// Package faults is what the sandbox's upstream does to a request besides
// answering it: the per-key token bucket (429 with a Retry-After), the
// credit balance (402), and the seeded or scripted faults (5xx, hangs,
// truncated bodies, latency). Every fault is a function of the seed and
// the request sequence, never of the clock, but the bucket, which runs on
// the server's clock.
package faults
