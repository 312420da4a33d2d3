-- The frontier (package pipeline/frontier): crawl.tasks, leased with a
-- fencing token (lease_token) that every write of a lease checks. A lease
-- holds no credits (crawl.tasks.credits_held is 0 since migration 00027:
-- a process holds them, crawl.credit_holds), so ending one touches only
-- its task.

-- name: AddTasks
-- Adds tasks once per run. A task found again at a smaller depth takes
-- that depth, so what a run reaches does not depend on which worker found
-- it first: a pending one simply; one of the @reexpandable kinds already
-- fetched (done, or skipped as fresh or by the adaptive schedule) goes
-- back to pending to be expanded again from what it stored (reexpand), and
-- one being fetched is marked so its lease's end does the same.
-- Each row names its parent task (NULL: a seed), so the committer adds
-- the children of a group of pages in one statement. A content list
-- carrying its counter (@credits > 0: the price of its page) gets its
-- lease_yield (migration 00061) from its last walk, read by key for those
-- only (the CASE runs the subquery for them alone).
INSERT INTO crawl.tasks AS x (run_id, parent_id, kind, key, params, depth, max_pages, refresh_after, lease_yield)
SELECT @run_id, t.parent_id, t.kind, t.key, t.params::jsonb, t.depth, t.max_pages, NULLIF(t.refresh_us, 0) * interval '1 microsecond',
    CASE WHEN t.credits > 0 THEN (
        SELECT CASE
            -- The counter of its last walk, within its refresh_after:
            -- skipped without a request, first, so the lists it leads to
            -- are known early.
            WHEN w.count = t.count AND (t.refresh_us = 0 OR w.walked_at > now() - t.refresh_us * interval '1 microsecond')
                THEN 'Infinity'::float8
            -- The counter's move per credit of its last walk's pages (never
            -- walked: one page). Not scaled by the rise: the pages' room is
            -- unknown, and a list of one page would rank below its peers.
            ELSE abs(t.count - coalesce(w.count, 0))::float8 / (t.credits * greatest(1, w.pages))
            END
        FROM (VALUES (1)) AS one LEFT JOIN crawl.content_walks w ON w.kind = t.kind AND w.key = t.key)
    END
FROM unnest(@parent_id::bigint[], @kind::text[], @key::text[], @params::text[], @depth::int[], @max_pages::int[], @refresh_us::bigint[], @count::bigint[], @credits::int[])
    AS t(parent_id, kind, key, params, depth, max_pages, refresh_us, count, credits)
ON CONFLICT (run_id, kind, key) DO UPDATE SET
    depth = EXCLUDED.depth,
    reexpand = x.reexpand OR (x.kind = ANY(@reexpandable::text[])
        AND (x.state IN ('done', 'leased') OR (x.state = 'skipped' AND x.outcome IN ('skipped_fresh', 'skipped_adaptive', 'skipped_budget')))),
    state = CASE WHEN x.kind = ANY(@reexpandable::text[]) AND (x.state = 'done' OR (x.state = 'skipped' AND x.outcome IN ('skipped_fresh', 'skipped_adaptive', 'skipped_budget')))
                 THEN 'pending' ELSE x.state END,
    updated_at = now()
WHERE EXCLUDED.depth < x.depth;

-- name: EndReexpand
-- Ends the lease of a task expanded again from stored data (no request):
-- done again, or skipped again when it had been skipped (as fresh, or by
-- the adaptive schedule); for a
-- commit batch with its children, aborted by crawl.expect_advanced when the
-- lease is gone.
WITH ended AS (
    UPDATE crawl.tasks SET state = CASE WHEN outcome IN ('skipped_fresh', 'skipped_adaptive', 'skipped_budget') THEN 'skipped' ELSE 'done' END, reexpand = false,
        lease_expires_at = NULL, finished_at = now(), updated_at = now()
    WHERE id = @id AND lease_token = @token AND state = 'leased'
    RETURNING 1
)
SELECT crawl.expect_advanced((SELECT count(*) FROM ended));

-- name: LeaseTasks
-- Takes up to @n pending tasks, each stamped with a fresh fencing token,
-- under owner tag @owner (one tag per call), but those in @aside (the
-- process set them aside: dearer than its budget has left). Breadth first:
-- lower depth first; within a depth, the tasks without a lease_yield in
-- the order found, then the content lists by yield, highest first (a
-- binding budget goes first where the content grew). It reads only the
-- partial index of pending tasks in that order (tasks_pending_yield_idx),
-- so its cost does not grow with the done ones; expired leases come back
-- through RescueTasks.
WITH next AS (
    SELECT id FROM crawl.tasks
    WHERE run_id = @run_id AND state = 'pending' AND id <> ALL(@aside::bigint[])
    ORDER BY depth, lease_yield DESC, id
    LIMIT @n
    FOR UPDATE SKIP LOCKED
)
UPDATE crawl.tasks t
SET state = 'leased', lease_owner = @owner, lease_token = nextval('crawl.lease_tokens'),
    lease_expires_at = now() + @ttl::interval, attempts = t.attempts + 1, updated_at = now()
FROM next WHERE t.id = next.id
RETURNING t.id, t.kind, t.key, t.params, t.depth, t.max_pages, t.cursor, t.pages, t.items, t.lease_token,
    coalesce(extract(epoch FROM t.refresh_after) * 1000000, 0)::bigint,
    t.reexpand AND t.finished_at IS NOT NULL, -- to expand again: it ended once already
    coalesce(t.outcome::text, ''), -- how it ended then (a list walked whole or not)
    t.lease_yield;

-- name: HeldTasks
-- The tasks leased under owner tag @owner, if a LeaseTasks whose answer
-- was lost went through.
SELECT id, kind, key, params, depth, max_pages, cursor, pages, items, lease_token,
    coalesce(extract(epoch FROM refresh_after) * 1000000, 0)::bigint, reexpand AND finished_at IS NOT NULL,
    coalesce(outcome::text, ''), lease_yield
FROM crawl.tasks WHERE run_id = @run_id AND lease_owner = @owner AND state = 'leased';

-- name: RescueTasks
-- Returns tasks whose lease expired (their worker died or lost its
-- database) to the pending state, except the tasks in @keep (this process
-- still works on them). The next lease bumps the fencing token, so the old
-- worker can no longer commit.
WITH ended AS (
    UPDATE crawl.tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    WHERE run_id = @run_id AND state = 'leased' AND lease_expires_at < now() AND id <> ALL(@keep::bigint[])
    RETURNING 1
)
SELECT count(*) FROM ended;

-- name: AdvanceTask
-- Records a fetched page under the fencing token, for a commit batch: the
-- cursor to continue from, the items and drops, and the end of the task when
-- @stop is not empty. The lease is renewed only once half of it has run: an
-- unchanged lease_expires_at (an indexed column) lets PostgreSQL update the
-- row in place (HOT), without new entries in the table's indexes. The expected page count makes a retried commit match
-- no row. When it matches no row it fails with SQLSTATE CR001
-- (crawl.expect_advanced), which rolls back the batch's implicit transaction.
WITH a AS (
    UPDATE crawl.tasks SET
        cursor = @cursor, pages = pages + 1, items = items + @items,
        dropped = dropped + @dropped, drop_reason = COALESCE(NULLIF(@drop_reason::text, ''), drop_reason),
        credits_saved = credits_saved + @saved,
        new_items = CASE WHEN @new_items::bigint IS NULL THEN new_items ELSE coalesce(new_items, 0) + @new_items::bigint END,
        -- Found at a smaller depth meanwhile: expanded again at its end.
        state = CASE WHEN @stop::text = '' THEN 'leased' WHEN reexpand THEN 'pending' ELSE 'done' END,
        reason = NULLIF(@stop::text, ''), outcome = NULLIF(@outcome::text, '')::crawl.task_outcome,
        lease_expires_at = CASE WHEN @stop::text <> '' THEN NULL
            WHEN lease_expires_at < now() + @ttl::interval / 2 THEN now() + @ttl::interval
            ELSE lease_expires_at END,
        finished_at = CASE WHEN @stop::text = '' THEN NULL ELSE now() END,
        updated_at = now()
    WHERE id = @id AND lease_token = @token AND state = 'leased' AND pages = @pages
    RETURNING 1
)
SELECT crawl.expect_advanced((SELECT count(*) FROM a));

-- name: TaskAdvanced
-- Whether the task already shows the page a commit would have advanced to.
SELECT lease_token = @token AND pages = @pages + 1 AND cursor = @cursor FROM crawl.tasks WHERE id = @id;

-- name: ExtendLeases
-- The process's heartbeat: renews every lease it holds (@ids with their
-- @tokens, in id order, as every statement locking several tasks) in one
-- statement, and returns the ids it renewed: a lease missing from them is
-- lost (taken over after it expired, or ended).
WITH l AS (
    SELECT t.id FROM crawl.tasks t
    JOIN unnest(@ids::bigint[], @tokens::bigint[]) AS x(id, token) ON t.id = x.id AND t.lease_token = x.token
    WHERE t.state = 'leased'
    ORDER BY t.id
    FOR UPDATE OF t
)
UPDATE crawl.tasks t SET lease_expires_at = now() + @ttl::interval
FROM l WHERE t.id = l.id
RETURNING t.id;

-- name: FinishTask
-- Ends a lease as failed or skipped with an outcome and a reason.
WITH ended AS (
    UPDATE crawl.tasks SET state = @state, reason = @reason, outcome = @outcome::text::crawl.task_outcome, lease_expires_at = NULL, finished_at = now(), updated_at = now()
    WHERE id = @id AND lease_token = @token AND state = 'leased'
    RETURNING 1
)
SELECT count(*) FROM ended;

-- name: ReleaseTask
-- Hands a lease back unfinished; its cursor keeps the progress made.
WITH ended AS (
    UPDATE crawl.tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    WHERE id = @id AND lease_token = @token AND state = 'leased'
    RETURNING 1
)
SELECT count(*) FROM ended;

-- name: ReleaseOwnedTasks
-- Hands back every lease of the run whose owner tag starts with @owner.
WITH ended AS (
    UPDATE crawl.tasks SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    WHERE run_id = @run_id AND state = 'leased' AND starts_with(lease_owner, @owner)
    RETURNING 1
)
SELECT count(*) FROM ended;

-- name: CountActiveTasks
-- Pending and leased tasks, each counted through its partial index; the
-- pending ones but those in @aside (the process set them aside).
SELECT (SELECT count(*) FROM crawl.tasks WHERE run_id = @run_id AND state = 'pending' AND id <> ALL(@aside::bigint[])),
       (SELECT count(*) FROM crawl.tasks WHERE run_id = @run_id AND state = 'leased');

-- name: CountFailedTasks
SELECT count(*) FROM crawl.tasks WHERE run_id = @run_id AND state = 'failed';

-- name: RetryFailedTasks
-- Puts failed tasks back to pending. A list keeps its cursor and page count,
-- so it resumes at the page that failed.
UPDATE crawl.tasks SET state = 'pending', reason = NULL, outcome = NULL, finished_at = NULL, updated_at = now()
WHERE run_id = @run_id AND state = 'failed';
