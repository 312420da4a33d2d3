// Package frontier is the durable queue of a run's tasks in PostgreSQL
// (crawl.tasks): tasks added once per run (a task found again closer to a
// seed takes the smaller depth), leased in batches with FOR UPDATE SKIP
// LOCKED, each lease stamped with a fencing token that every write of the
// lease checks, renewed by one statement for all of a process's leases,
// and rescued when it expires. Leases go breadth first; within a depth,
// the content lists carrying their counter come after the other tasks,
// by their expected yield per credit (crawl.tasks.lease_yield, set when
// they are added), so a binding budget goes first where content grew.
//
// A page's commit (Commit, Send) is one batch in one transaction: the
// task's advance under the token first (a stale worker's matches no row
// and aborts the batch: ErrLeaseLost), then the page's rows (sinks), its
// archived body and the tasks it discovered. The advance expects the
// task's page count, so a retried commit that had gone through is told
// apart (ErrAlreadyApplied) and counted once. The committer (committer.go)
// sends many tasks' pages in one round trip and one transaction, each
// table's rows of all of them in one statement (every advance first: a
// lost lease aborts the group, whose pages are then sent one transaction
// each).
//
// The runner (package pipeline) leases, commits and ends tasks through a
// Frontier; what a task costs is the budget's (package budget).
package frontier
