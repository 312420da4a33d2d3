// Package pipeline is the runner: it starts, continues or joins a run of a
// parsed job (jobfile), seeds its durable frontier in Postgres (package
// frontier), and keeps tasks in progress up to a target (limits.workers,
// or the client's concurrency limit), leased in batches with FOR UPDATE
// SKIP LOCKED and renewed by one heartbeat statement per process. For
// each page a task hands the kind's call a page lease (lease.go): what the
// page may spend (credits of the process's hold on the run's budget,
// package budget), what it holds (its bodies against the in-flight
// budget) and what it must wait for (the previous page's commit). The kind
// maps the answer (kinds), and the page's rows (sinks), its cursor advance
// and the tasks it discovered commit in one fenced transaction, sent with
// other tasks' pages in one round trip (frontier.Committer): a task whose
// lease was taken over cannot commit, and a request in flight holds no
// connection. Before a task is fetched, reuse (reuse.go: refresh_after,
// stop_at_seen) and an adaptive run's schedule (package adaptive) may end
// it without a request; the processes on a run share the key's quota
// (package quota).
//
// The runner composes these parts and hands each what it needs of it (a
// pool, a retry while the database is away, the budget's credits left),
// never itself.
//
// Every task ends done (with how its list stopped), failed with a reason,
// or skipped with a reason; tasks in flight when a run stops are released
// and picked up again by a resume.
package pipeline
