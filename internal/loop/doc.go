// Package loop is the loop of a process's background work: the beats of
// its leases, its credit hold and its share of the quota, the recording of
// its visits and the sending of its commits, each run every period and at
// once when kicked.
package loop
