-- Reports (package pipeline, status.go and progress.go): read only.

-- name: RunStatus
-- Run @run_id, or the latest run when it is NULL, with its pages and items.
SELECT r.id, r.job_name, r.state, coalesce(r.stop_reason, ''), r.started_at, r.finished_at,
       coalesce(sum(t.pages), 0), coalesce(sum(t.items), 0)
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
WHERE r.id = COALESCE(@run_id, (SELECT max(id) FROM crawl.runs))
GROUP BY r.id;

-- name: TaskStates
SELECT state, count(*) FROM crawl.tasks WHERE run_id = @run_id GROUP BY state;

-- name: FailureReasons
-- Failed and skipped tasks grouped by kind and reason class (the first two
-- colon-separated parts of the reason), with up to 3 example keys and the
-- first full reason.
SELECT state, kind, reason_class, count(*),
       (array_agg(key ORDER BY id))[1:3], (array_agg(coalesce(reason, '') ORDER BY id))[1]
FROM (SELECT state, kind, key, id, reason,
             split_part(coalesce(reason, ''), ':', 1) ||
             CASE WHEN strpos(coalesce(reason, ''), ':') > 0 THEN ':' || split_part(reason, ':', 2) ELSE '' END AS reason_class
      FROM crawl.tasks WHERE run_id = @run_id AND state IN ('failed', 'skipped')) t
GROUP BY 1, 2, 3 ORDER BY state, 4 DESC, 3 LIMIT 20;

-- name: DroppedEntries
-- Entries dropped, by kind, with the latest reason.
SELECT kind, sum(dropped)::bigint,
       coalesce((array_agg(drop_reason ORDER BY updated_at DESC, id DESC) FILTER (WHERE drop_reason IS NOT NULL))[1], '')
FROM crawl.tasks WHERE run_id = @run_id AND dropped > 0
GROUP BY kind ORDER BY 2 DESC, 1;

-- name: Progress
-- The run's credits and frontier by state, for the progress line when no
-- sample is recorded (the columns of RecordSample's RETURNING).
SELECT r.credits_billed, r.credits_committed, r.max_credits,
       count(t.*) FILTER (WHERE t.state = 'pending'), count(t.*) FILTER (WHERE t.state = 'leased'),
       count(t.*) FILTER (WHERE t.state = 'done'), count(t.*) FILTER (WHERE t.state = 'failed'),
       count(t.*) FILTER (WHERE t.state = 'skipped')
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
WHERE r.id = @run_id
GROUP BY r.id;

-- name: RunProcesses
-- The processes that worked on a run, with their version and counters as of
-- their latest sample, and their limit of requests in flight then (NULL
-- before migration 00052, or before a process's first sample).
SELECT owner, crawler_version, coalesce(state, ''), started_at, finished_at, pages, rows_written, requests, rate_limited,
       in_flight, concurrency_limit, concurrency_move
FROM crawl.run_processes WHERE run_id = @run_id ORDER BY started_at, owner;

-- name: ListRuns
-- The latest @max_runs runs (of job @job_name, or all when it is ''), newest
-- first. Cheap at millions of tasks and a year of runs: pages and failed
-- tasks come from the processes' counters and the latest sample, credits
-- saved (crawl.run_ledger's: refresh_after and stop_at_seen) from the run's
-- summary (crawl.runs.credits_saved); only runs without them (from before
-- migration 00011, running, or killed) read their tasks, in one part apart
-- (a fallback per row would be costed per row: JIT compiled for seconds).
-- A pruned run (its tasks gone) shows the credits saved crawler prune
-- recorded when it removed them.
WITH r AS (
    SELECT r.id, r.job_name, r.state, r.stop_reason, r.started_at, r.finished_at, r.credits_billed, r.credits_saved,
           r.pruned_credits_saved, r.pruned_at,
           (SELECT sum(pages) FROM crawl.run_processes p WHERE p.run_id = r.id) AS pages,
           (SELECT s.tasks_failed FROM crawl.run_samples s WHERE s.run_id = r.id ORDER BY s.at DESC LIMIT 1) AS failed,
           (SELECT array_agg(DISTINCT crawler_version ORDER BY crawler_version) FROM crawl.run_processes p WHERE p.run_id = r.id) AS versions
    FROM crawl.runs r
    WHERE @job_name::text = '' OR r.job_name = @job_name
    ORDER BY r.id DESC
    LIMIT @max_runs
), t AS (
    SELECT x.run_id, sum(x.pages) AS pages, count(*) FILTER (WHERE x.state = 'failed') AS failed, sum(x.credits_saved) AS saved
    FROM crawl.tasks x
    WHERE x.run_id IN (SELECT id FROM r WHERE pages IS NULL OR failed IS NULL OR credits_saved IS NULL)
    GROUP BY x.run_id
)
SELECT r.id, r.job_name, r.state, coalesce(r.stop_reason, ''), r.started_at, r.finished_at, r.credits_billed,
       coalesce(r.pages, t.pages, 0)::bigint, coalesce(r.failed, t.failed, 0), coalesce(r.versions, '{}'),
       coalesce(r.pruned_credits_saved, r.credits_saved, t.saved, 0)::bigint, r.pruned_at
FROM r LEFT JOIN t ON t.run_id = r.id
ORDER BY r.id DESC;

-- name: SchemaDrift
-- How the shape of run @run_id's answers differs from the job's previous
-- run that sampled any (crawl.response_keys): key paths new on an
-- endpoint both runs asked, and paths gone that the previous run saw in at
-- least half its sampled answers of an endpoint this run sampled 5 times
-- or more (a rare optional key is not reported gone). The first column is
-- the previous run (NULL: none to compare with, and no other row). Each
-- key path is looked up in the other run by response_keys_pkey (a few
-- hundred probes, ~0.5 ms; scans of the two runs' keys joined with each
-- other took 3 ms).
WITH prev_run AS (
    -- The latest earlier run of the job first (runs_job_name_idx, backwards):
    -- not every run of the job.
    SELECT (SELECT q.id FROM crawl.runs q
            WHERE q.job_name = r.job_name AND q.id < r.id AND EXISTS (SELECT 1 FROM crawl.response_keys k WHERE k.run_id = q.id)
            ORDER BY q.id DESC LIMIT 1) AS id
    FROM crawl.runs r WHERE r.id = @run_id
), drift AS (
    SELECT 'new' AS change, c.endpoint, c.key, c.answers FROM crawl.response_keys c
    WHERE c.run_id = @run_id AND c.key <> ''
      AND EXISTS (SELECT 1 FROM crawl.response_keys p WHERE p.run_id = (SELECT id FROM prev_run) AND p.endpoint = c.endpoint AND p.key = '')
      AND NOT EXISTS (SELECT 1 FROM crawl.response_keys p WHERE p.run_id = (SELECT id FROM prev_run) AND p.endpoint = c.endpoint AND p.key = c.key)
    UNION ALL
    SELECT 'gone', p.endpoint, p.key, p.answers FROM crawl.response_keys p
    JOIN crawl.response_keys pt ON pt.run_id = p.run_id AND pt.endpoint = p.endpoint AND pt.key = ''
    JOIN crawl.response_keys ct ON ct.run_id = @run_id AND ct.endpoint = p.endpoint AND ct.key = ''
    WHERE p.run_id = (SELECT id FROM prev_run) AND p.key <> '' AND p.answers * 2 >= pt.answers AND ct.answers >= 5
      AND NOT EXISTS (SELECT 1 FROM crawl.response_keys c WHERE c.run_id = @run_id AND c.endpoint = p.endpoint AND c.key = p.key)
)
SELECT (SELECT id FROM prev_run), d.change, d.endpoint, d.key, d.answers
FROM (SELECT 1) one LEFT JOIN (SELECT * FROM drift ORDER BY change DESC, endpoint, key LIMIT 200) d ON true;
