// Package pipeline turns a job file into a crawl: it seeds a durable
// frontier in Postgres, runs bounded workers that lease tasks with
// FOR UPDATE SKIP LOCKED, fetches each page through sources and commits the
// page's rows (sinks), its cursor advance and the tasks it discovered in one
// transaction. A fencing token on every lease keeps a worker whose lease was
// taken over from committing.
//
// Every task ends done (with how its list stopped), failed with a reason, or
// skipped with a reason; tasks in flight when a run stops are released and
// picked up again by a resume.
package pipeline
