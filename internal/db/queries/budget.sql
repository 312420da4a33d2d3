-- The credit budget (package pipeline, budget.go): crawl.runs' counters,
-- the credits each lease holds (crawl.tasks.credits_held) and the usage per
-- endpoint (crawl.credit_usage).

-- name: ReserveCredit
-- Takes a credit for a lease in one statement: the run's counter (the budget
-- check, serialised on the run's row) and the lease's. When the lease is gone
-- but the budget was taken, crawl.expect_lease aborts the statement, so
-- neither write happens. On failure it says what the budget holds, to tell a
-- spent budget from one full of reservations in flight.
WITH r AS (
    UPDATE crawl.runs SET credits_committed = credits_committed + 1
    WHERE id = @run_id AND (max_credits IS NULL OR credits_committed < max_credits)
    RETURNING 1
), t AS (
    UPDATE crawl.tasks SET credits_held = credits_held + 1
    WHERE id = @task_id AND lease_token = @token AND state = 'leased' AND EXISTS (SELECT 1 FROM r)
    RETURNING 1
)
SELECT CASE WHEN (SELECT count(*) FROM r) = 0 THEN 0 ELSE crawl.expect_lease((SELECT count(*) FROM t)) END,
       x.credits_billed, x.credits_committed, x.max_credits
FROM crawl.runs x WHERE x.id = @run_id;

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

-- name: SettleCredit
-- Settles a lease's reservation: billed, it becomes a billed credit;
-- otherwise it is given back. When the lease no longer holds it (given back
-- when the lease expired), a billed answer still counts.
WITH t AS (
    UPDATE crawl.tasks SET credits_held = credits_held - 1
    WHERE id = @task_id AND lease_token = @token AND credits_held > 0
    RETURNING 1
), run AS (
    UPDATE crawl.runs SET credits_committed = credits_committed + @billed - (SELECT count(*) FROM t),
                          credits_billed = credits_billed + @billed
    WHERE id = @run_id
)
INSERT INTO crawl.credit_usage AS u (run_id, endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining)
VALUES (@run_id, @endpoint, 1, @billed, @free, @rate_limited, @errors, @credits_charged, @credits_remaining)
ON CONFLICT (run_id, endpoint) DO UPDATE SET
    requests          = u.requests + 1,
    billed            = u.billed + EXCLUDED.billed,
    free              = u.free + EXCLUDED.free,
    rate_limited      = u.rate_limited + EXCLUDED.rate_limited,
    errors            = u.errors + EXCLUDED.errors,
    credits_charged   = u.credits_charged + EXCLUDED.credits_charged,
    credits_remaining = COALESCE(EXCLUDED.credits_remaining, u.credits_remaining);

-- name: WithdrawCredit
-- Gives back a reservation whose request was never sent.
WITH t AS (
    UPDATE crawl.tasks SET credits_held = credits_held - 1
    WHERE id = @task_id AND lease_token = @token AND credits_held > 0
    RETURNING 1
)
UPDATE crawl.runs SET credits_committed = credits_committed - (SELECT count(*) FROM t) WHERE id = @run_id;

-- name: SetMaxCredits
UPDATE crawl.runs SET max_credits = @max_credits WHERE id = @run_id;

-- name: LoadCredits
SELECT max_credits, credits_committed, credits_billed FROM crawl.runs WHERE id = @run_id;
