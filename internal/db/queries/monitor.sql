-- Watching a run (package pipeline, monitor.go): the processes working on
-- it (crawl.run_processes) and its progress samples (crawl.run_samples).

-- name: JoinRun
-- Records that a process (lease owner tag @owner) works on the run, with
-- its crawler version. A process that joins again (the same owner tag is
-- not reused, but be safe) starts its row afresh.
INSERT INTO crawl.run_processes (run_id, owner, crawler_version) VALUES (@run_id, @owner, @crawler_version)
ON CONFLICT (run_id, owner) DO UPDATE SET crawler_version = EXCLUDED.crawler_version, finished_at = NULL, state = NULL;

-- name: RecordSample
-- One statement per process and interval: the process's counters (and its
-- limit of requests in flight) go to its crawl.run_processes row, and a
-- sample joins them with the run's credits and task states. Returns the
-- run-wide figures for the live line. A process's counters only grow, and
-- its last sample is final: a sample the server runs late (its sender
-- cancelled when the run ended) never takes a counter back.
WITH p AS (
    UPDATE crawl.run_processes SET pages = greatest(pages, @pages), rows_written = greatest(rows_written, @rows_written),
        requests = greatest(requests, @requests), rate_limited = greatest(rate_limited, @rate_limited),
        finished_at = CASE WHEN @final::boolean THEN now() END,
        state = CASE WHEN @final::boolean THEN NULLIF(@state::text, '') END,
        in_flight = @in_flight::float8, concurrency_limit = @concurrency_limit::integer, concurrency_move = @concurrency_move::text
    WHERE run_id = @run_id AND owner = @owner AND (@final::boolean OR finished_at IS NULL)
), t AS (
    SELECT count(*) FILTER (WHERE state = 'pending') AS pending, count(*) FILTER (WHERE state = 'leased') AS leased,
           count(*) FILTER (WHERE state = 'done') AS done, count(*) FILTER (WHERE state = 'failed') AS failed,
           count(*) FILTER (WHERE state = 'skipped') AS skipped
    FROM crawl.tasks WHERE run_id = @run_id
)
INSERT INTO crawl.run_samples (run_id, owner, pages, rows_written, requests, rate_limited, pause_seconds, outage_seconds, rate,
                               credits_billed, credits_committed, tasks_pending, tasks_leased, tasks_done, tasks_failed, tasks_skipped,
                               in_flight, concurrency_limit, concurrency_move, concurrency_moves)
SELECT @run_id::bigint, @owner::text, @pages::bigint, @rows_written::bigint, @requests::bigint, @rate_limited::bigint,
       @pause_seconds::float8, @outage_seconds::float8, @rate::float8,
       r.credits_billed, r.credits_committed, t.pending, t.leased, t.done, t.failed, t.skipped,
       @in_flight::float8, @concurrency_limit::integer, @concurrency_move::text, @concurrency_moves::jsonb
FROM crawl.runs r, t WHERE r.id = @run_id
RETURNING credits_billed, credits_committed, (SELECT max_credits FROM crawl.runs WHERE id = @run_id),
          tasks_pending, tasks_leased, tasks_done, tasks_failed, tasks_skipped;

-- name: RecordShapes
-- Adds the sampled shapes of a process's answers (pipeline/shapes.go): per
-- endpoint and key path, how many sampled answers carried it.
INSERT INTO crawl.response_keys AS k (run_id, endpoint, key, answers)
SELECT @run_id, x.e, x.k, x.n FROM unnest(@endpoints::text[], @keys::text[], @counts::bigint[]) AS x(e, k, n)
ON CONFLICT (run_id, endpoint, key) DO UPDATE SET answers = k.answers + EXCLUDED.answers;
