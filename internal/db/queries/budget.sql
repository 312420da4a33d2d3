-- The credit budget (package pipeline, budget.go): crawl.runs' counters,
-- the credits each lease holds (crawl.tasks.credits_held) and the usage per
-- endpoint (crawl.credit_usage).

-- name: ReserveCredits
-- Takes credits for a lease in one statement: the run's counter (the budget
-- check, serialised on the run's row) and the lease's. It grants @block
-- credits while the run has no budget or at least @far left uncommitted,
-- @need (what the next request lacks: 1, or more for a dearer one) near
-- the budget, none when that much is not left: the lease then spends them
-- request by request without asking again. When the lease is
-- gone but the budget was taken, crawl.expect_lease aborts the statement, so
-- neither write happens. It returns whether it granted (ok), how many, what
-- the lease now holds and for how many seconds its lease runs still; on
-- failure what the budget holds, to tell a spent budget from one full of
-- reservations in flight.
WITH x AS (
    SELECT id, CASE
        WHEN max_credits IS NULL OR max_credits - credits_committed >= @far::bigint THEN greatest(@block::bigint, @need::bigint)
        WHEN max_credits - credits_committed >= @need::bigint THEN @need::bigint
        ELSE 0 END AS n
    FROM crawl.runs WHERE id = @run_id
    FOR UPDATE
), r AS (
    UPDATE crawl.runs r SET credits_committed = r.credits_committed + x.n
    FROM x WHERE r.id = x.id AND x.n > 0
    RETURNING x.n
), t AS (
    UPDATE crawl.tasks SET credits_held = credits_held + (SELECT n FROM r)
    WHERE id = @task_id AND lease_token = @token AND state = 'leased' AND EXISTS (SELECT 1 FROM r)
    RETURNING credits_held, extract(epoch FROM lease_expires_at - now())::float8 AS valid_s
)
SELECT CASE WHEN (SELECT count(*) FROM r) = 0 THEN 0 ELSE crawl.expect_lease((SELECT count(*) FROM t)) END,
       coalesce((SELECT credits_held FROM t), 0)::bigint, coalesce((SELECT valid_s FROM t), 0)::float8,
       y.credits_billed, y.credits_committed, y.max_credits
FROM crawl.runs y WHERE y.id = @run_id;

-- name: ReclaimExpiredCredits
-- Gives back the reservations of the run's expired leases (their process
-- died or lost the database). The task stays leased until it is rescued; if
-- its owner was alive after all and its answer is billed, SettleCredit still
-- counts it.
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE run_id = @run_id AND state = 'leased' AND lease_expires_at < now() AND credits_held > 0
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET credits_held = 0 FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
), given AS (
    UPDATE crawl.runs r SET credits_committed = r.credits_committed - x.held
    FROM (SELECT run_id, sum(held) AS held FROM ended GROUP BY run_id) x
    WHERE r.id = x.run_id AND x.held > 0
)
SELECT coalesce(sum(held), 0) FROM ended;

-- name: ReclaimStaleCredits
-- Gives back credits held by tasks that no lease holds any more (a settle
-- lost past the outage timeout), once per process and run.
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE run_id = @run_id AND credits_held > 0 AND state <> 'leased'
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET credits_held = 0 FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
), given AS (
    UPDATE crawl.runs r SET credits_committed = r.credits_committed - x.held
    FROM (SELECT run_id, sum(held) AS held FROM ended GROUP BY run_id) x
    WHERE r.id = x.run_id AND x.held > 0
)
SELECT coalesce(sum(held), 0) FROM ended;

-- name: SettleCredits
-- Records what a lease's answers cost since its last settle, in the page's
-- commit batch (after the fenced advance, so both or neither happen), or
-- alone when the lease ends without a commit. @billed billed answers turn
-- as many of the lease's credits into billed credits; a billed answer whose
-- credit the lease no longer holds (given back when the lease expired, or
-- the lease is lost) still counts, as billed and committed. With @end the
-- lease's other credits go back to the run. The usage of @endpoint, when
-- not empty, is added to crawl.credit_usage. Returns what the lease holds
-- after it.
WITH o AS (
    SELECT id, credits_held FROM crawl.tasks
    WHERE id = @task_id AND lease_token = @token
    FOR UPDATE
), t AS (
    UPDATE crawl.tasks x
    SET credits_held = CASE WHEN @end::boolean THEN 0 ELSE o.credits_held - least(o.credits_held, @billed::int) END
    FROM o WHERE x.id = o.id
    RETURNING x.credits_held AS held, o.credits_held AS before
), run AS (
    UPDATE crawl.runs
    SET credits_billed = credits_billed + @billed::int,
        credits_committed = credits_committed + @billed::int - coalesce((SELECT before - held FROM t), 0)
    WHERE id = @run_id AND (@billed::int > 0 OR EXISTS (SELECT 1 FROM t WHERE before <> held))
), usage AS (
    INSERT INTO crawl.credit_usage AS u (run_id, endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining, cached)
    SELECT @run_id, @endpoint::text, @requests::int, @billed::int, @free::int, @rate_limited::int, @errors::int, @credits_charged::bigint, @credits_remaining::bigint, @cached::int
    WHERE @endpoint::text <> ''
    ON CONFLICT (run_id, endpoint) DO UPDATE SET
        requests          = u.requests + EXCLUDED.requests,
        billed            = u.billed + EXCLUDED.billed,
        free              = u.free + EXCLUDED.free,
        rate_limited      = u.rate_limited + EXCLUDED.rate_limited,
        errors            = u.errors + EXCLUDED.errors,
        credits_charged   = u.credits_charged + EXCLUDED.credits_charged,
        credits_remaining = COALESCE(EXCLUDED.credits_remaining, u.credits_remaining),
        cached            = u.cached + EXCLUDED.cached
)
SELECT coalesce((SELECT held FROM t), 0)::bigint;

-- name: SetMaxCredits
UPDATE crawl.runs SET max_credits = @max_credits WHERE id = @run_id;

-- name: LoadCredits
-- The run's budget and, when the upstream reports it, the account's
-- balance: the lowest credits_remaining any endpoint's answers reported
-- (the balance only falls while a run spends it).
SELECT max_credits, credits_committed, credits_billed,
       (SELECT min(credits_remaining) FROM crawl.credit_usage u WHERE u.run_id = r.id)
FROM crawl.runs r WHERE id = @run_id;
