-- `crawler plan` (package pipeline, plan.go): read-only lookups of a job's
-- earlier runs.

-- name: LastDoneRun
-- The job's latest completed run: its tasks are the history an estimate
-- is made from.
SELECT id, credits_billed FROM crawl.runs
WHERE job_name = @job_name AND state = 'done'
ORDER BY id DESC LIMIT 1;

-- name: RunTaskTree
-- A run's tasks with their parent (0 for a seed) and pages.
SELECT id, coalesce(parent_id, 0) AS parent_id, kind, key, pages::bigint AS pages
FROM crawl.tasks WHERE run_id = @run_id;

-- name: ObservedEntriesPerPage
-- The largest average page (entries per page, rounded up) of the lists of
-- the job's runs that walked more than one page (their first pages are
-- full); 0 when none did.
SELECT coalesce(max(ceil(t.items::numeric / t.pages)), 0)::bigint
FROM crawl.tasks t JOIN crawl.runs r ON r.id = t.run_id
WHERE r.job_name = @job_name AND t.pages > 1;
