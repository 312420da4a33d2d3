// Package adaptive is adaptive revisits at run time (reuse.adaptive,
// docs/revisit.md); the estimates and the schedule themselves are package
// revisit's, pure. A run records what it saw of the items it visited as
// the visits end (record.go: a list's entries no earlier run stored, a
// profile's counters changed or not) in crawl.revisit_items, with each
// item's estimated change rate; every run does, so that a job turned
// adaptive has a history. A run of an adaptive job is created with a
// schedule (ScheduleRun): for every item the job's previous run reached,
// visit it or not, chosen to spend limits.max_credits where the expected
// yield per credit is highest (crawl.revisit_plan). A worker reads its
// task's decision before anything else (Revisits.Decide) and admits a
// visit only when the credits left cover it after the visits ranked
// higher (order.go); what the estimates kept and did not spend goes, once
// the frontier is done, to the visits skipped for the budget (the second
// look). A skipped profile expands to its lists from stored data, as
// refresh_after's fresh ones do; a list the schedule wants whole is not
// cut by stop_at_seen. Items never visited are not in the schedule and
// are visited.
//
// The runner starts a process's Revisits with what they need of it (the
// pool, a retry while the database is away, the credits left), asks it
// about each task before its fetch, tells it each task's end, and ends
// it with the run.
package adaptive
