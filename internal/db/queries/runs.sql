-- The run lifecycle (package pipeline, runs.go): crawl.runs.

-- name: CreateRun
INSERT INTO crawl.runs (job_name, job, max_credits, fingerprint)
VALUES (@job_name, @job, @max_credits, NULLIF(@fingerprint, '')) RETURNING id;

-- name: FinishRun
-- Records how a run ended, unless that would misstate it: "done" needs an
-- empty frontier and every seed file seeded; a stop or failure is recorded only when no other process
-- (lease owner not starting with @owner) holds a live lease on the run, and
-- never replaces "done" or "abandoned" (a run `crawler run` gave up on keeps
-- saying so, whoever still finishes work on it). It summarizes the run's
-- tasks (entries_per_page, credits_saved: read instead of every task of
-- every run by ObservedEntriesPerPage and ListRuns), one read of the run.
UPDATE crawl.runs r SET state = @state, stop_reason = NULLIF(@reason, ''), finished_at = now(),
    entries_per_page = s.entries_per_page, credits_saved = s.credits_saved
FROM (SELECT coalesce(max(ceil(t.items::numeric / t.pages)) FILTER (WHERE t.pages > 1), 0)::bigint AS entries_per_page,
             coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved
      FROM crawl.tasks t WHERE t.run_id = @run_id) s
WHERE r.id = @run_id AND (
    (@state = 'done' AND NOT r.seeds_pending AND NOT EXISTS (
        SELECT 1 FROM crawl.tasks t WHERE t.run_id = @run_id AND t.state IN ('pending', 'leased')))
 OR (@state <> 'done' AND r.state NOT IN ('done', 'abandoned') AND NOT EXISTS (
        SELECT 1 FROM crawl.tasks t WHERE t.run_id = @run_id AND t.state = 'leased'
          AND t.lease_expires_at > now() AND NOT starts_with(t.lease_owner, @owner))))
RETURNING state;

-- name: OtherLeases
-- Other processes' live leases on run @run_id (lease owners not starting
-- with @owner), by process (the owner before '#'): the latest expiry of
-- each, and when its credit hold last beat (NULL: it holds none). A live
-- process moves its leases on every lease_timeout/3 and beats its hold
-- every second; a dead one's stay until they lapse.
-- The seconds until each lapses are the server's: a process's clock may
-- differ from it.
SELECT l.holder, l.until, extract(epoch FROM l.until - now())::float8, h.beat_at
FROM (SELECT split_part(lease_owner, '#', 1) AS holder, max(lease_expires_at) AS until
      FROM crawl.tasks
      WHERE run_id = @run_id AND state = 'leased' AND lease_expires_at > now() AND NOT starts_with(lease_owner, @owner)
      GROUP BY 1) l
LEFT JOIN crawl.credit_holds h ON h.run_id = @run_id AND h.owner = l.holder;

-- name: RunState
SELECT state FROM crawl.runs WHERE id = @run_id;

-- name: LockRunRow
-- Takes the run's row before FinishRun, so that FinishRun's check for
-- pending tasks reads what a second look holding the row sent back
-- (SecondLookCandidates locks it too).
SELECT 1 FROM crawl.runs WHERE id = @run_id FOR UPDATE;

-- name: ResumeRun
-- Marks the run continued or joined now (resumed_at: activity); its tasks
-- will change, so its summary is cleared (FinishRun writes it again). A
-- pruned run is never resumed: its tasks are gone. crawler prune marks a
-- run pruned only while it is not running, with this row locked, so a
-- resume and a prune of one run never both succeed. With @unless_spent
-- (crawler run --resume ID), a run stopped by its budget is left as it is
-- unless @max_credits (NULL: the run's own budget) is larger than the
-- budget it stopped at: resuming it would only stop again, and its
-- resumed_at would restart resume_within.
UPDATE crawl.runs SET state = 'running', stop_reason = NULL, finished_at = NULL, resumed_at = now(),
    entries_per_page = NULL, credits_saved = NULL, budget_stop = NULL
WHERE id = @run_id AND job_name = @job_name AND pruned_at IS NULL
  AND (NOT @unless_spent::boolean OR budget_stop IS NULL OR coalesce(@max_credits::bigint, max_credits) > budget_stop);

-- name: MarkBudgetStop
-- Records that the run stopped because its budget was spent, with the
-- budget it had (budget_stop), once its state says stopped.
UPDATE crawl.runs SET budget_stop = max_credits WHERE id = @run_id AND state = 'stopped' AND max_credits IS NOT NULL;

-- name: RunJobName
SELECT job_name, pruned_at IS NOT NULL, credits_billed, budget_stop FROM crawl.runs WHERE id = @run_id;

-- name: LockJob
-- Serializes the find-or-create of `crawler run JOB` among every process
-- starting the same job: a transaction-level advisory lock keyed by the job
-- name, released when the transaction that created or chose the run commits.
SELECT pg_advisory_xact_lock(hashtextextended('crawler run: ' || @job_name, 0));

-- name: LatestRun
-- The job's latest run, the budget it had when it stopped for want of
-- credits (NULL: it did not), how long since it last showed activity (its start,
-- its end, its last continuation, or any change to one of its tasks, as the database's clock sees
-- it) and whether a process is working on it: a live lease, or a run marked
-- running that changed within the last lease timeout (just created, its
-- workers not yet leasing).
SELECT r.id, r.state, coalesce(r.fingerprint, '') AS fingerprint, r.credits_billed, r.budget_stop,
       extract(epoch FROM now() - a.last_active)::float8 AS idle_seconds,
       (EXISTS (SELECT 1 FROM crawl.tasks t
                WHERE t.run_id = r.id AND t.state = 'leased' AND t.lease_expires_at > now())
        OR (r.state = 'running' AND a.last_active > now() - @lease_timeout::interval)) AS in_progress
FROM crawl.runs r
CROSS JOIN LATERAL (
    SELECT greatest(r.started_at, r.finished_at, r.resumed_at,
                    (SELECT max(t.updated_at) FROM crawl.tasks t WHERE t.run_id = r.id)) AS last_active
) a
WHERE r.job_name = @job_name
ORDER BY r.id DESC LIMIT 1;

-- name: AbandonRun
-- Marks an unfinished run that `crawler run` will not continue, with the
-- summary of its tasks (see FinishRun) when it has none (it was killed).
UPDATE crawl.runs r SET state = 'abandoned', stop_reason = @reason, finished_at = coalesce(finished_at, now()),
    entries_per_page = coalesce(r.entries_per_page, s.entries_per_page), credits_saved = coalesce(r.credits_saved, s.credits_saved)
FROM (SELECT coalesce(max(ceil(t.items::numeric / t.pages)) FILTER (WHERE t.pages > 1), 0)::bigint AS entries_per_page,
             coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved
      FROM crawl.tasks t WHERE t.run_id = @run_id) s
WHERE r.id = @run_id AND r.state NOT IN ('done', 'abandoned');

