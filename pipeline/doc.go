// Package pipeline is the runner: it starts, continues or joins a run of a
// parsed job (jobfile), seeds its durable frontier in Postgres, and runs
// bounded workers that lease tasks with FOR UPDATE SKIP LOCKED. For each
// page a worker hands the kind's call a page lease (lease.go): what the
// page may spend (credits reserved against the run's budget, budget.go),
// what it holds (its bodies against the in-flight budget) and what it must
// wait for (the previous page's commit). The kind maps the answer (kinds),
// and the page's rows (sinks), its cursor advance, its credits and the
// tasks it discovered commit in one fenced batch (frontier.go): a worker
// whose lease was taken over cannot commit.
//
// Every task ends done (with how its list stopped), failed with a reason,
// or skipped with a reason; tasks in flight when a run stops are released
// and picked up again by a resume.
package pipeline
