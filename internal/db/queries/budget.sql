-- The credit budget (package pipeline/budget): crawl.runs' counters,
-- each process's hold (crawl.credit_holds, through crawl.hold_credits) and
-- the usage per endpoint (crawl.credit_usage).

-- name: HoldCredits
-- A process's statement on its hold (crawl.hold_credits): posts @billed
-- credits, gives back up to @void spare ones, grants @need (and up to
-- @want) when that much is left, records @in_flight. Returns the grant, the
-- hold, the run's billed and committed credits and budget, and what the
-- other processes hold: dead ones (no beat within @dead) in all, live ones
-- in flight.
SELECT granted, held, billed, committed, max_credits, dead_held, others_in_flight
FROM crawl.hold_credits(@run_id, @owner, @billed::bigint, @void::bigint, @want::bigint, @need::bigint, @in_flight::bigint, @dead::interval);

-- name: AddCreditUsage
-- Adds a process's answers per endpoint to crawl.credit_usage, in the batch
-- of its HoldCredits.
INSERT INTO crawl.credit_usage AS u (run_id, endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining, cached)
SELECT @run_id, x.endpoint, x.requests, x.billed, x.free, x.rate_limited, x.errors, x.credits_charged, x.credits_remaining, x.cached
FROM unnest(@endpoint::text[], @requests::int[], @billed::bigint[], @free::int[], @rate_limited::int[], @errors::int[],
            @credits_charged::bigint[], @credits_remaining::bigint[], @cached::int[])
     AS x(endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining, cached)
ON CONFLICT (run_id, endpoint) DO UPDATE SET
    requests          = u.requests + EXCLUDED.requests,
    billed            = u.billed + EXCLUDED.billed,
    free              = u.free + EXCLUDED.free,
    rate_limited      = u.rate_limited + EXCLUDED.rate_limited,
    errors            = u.errors + EXCLUDED.errors,
    credits_charged   = u.credits_charged + EXCLUDED.credits_charged,
    credits_remaining = COALESCE(EXCLUDED.credits_remaining, u.credits_remaining),
    cached            = u.cached + EXCLUDED.cached;

-- name: DropCreditHold
-- A process done with a run whose hold is empty removes it.
DELETE FROM crawl.credit_holds WHERE run_id = @run_id AND owner = @owner AND held = 0;

-- name: AdmissionCredits
-- What admitting new work counts as spent besides the process's own: the
-- run's budget and billed credits, what dead processes hold (no beat within
-- @dead), and what the other live processes have in flight. Read-only.
SELECT r.max_credits, r.credits_billed,
       coalesce(sum(h.held) FILTER (WHERE h.beat_at < now() - @dead::interval), 0)::bigint,
       coalesce(sum(h.in_flight) FILTER (WHERE h.beat_at >= now() - @dead::interval), 0)::bigint
FROM crawl.runs r LEFT JOIN crawl.credit_holds h ON h.run_id = r.id AND h.owner <> @owner
WHERE r.id = @run_id
GROUP BY r.id;

-- name: SetMaxCredits
UPDATE crawl.runs SET max_credits = @max_credits WHERE id = @run_id;

-- name: LoadCredits
-- The run's budget, what processes hold of it, what dead processes (no
-- beat within @dead) hold: charged or not, unknown, and, when the upstream
-- reports it, the account's balance: the lowest credits_remaining any
-- endpoint's answers reported (the balance only falls while a run spends
-- it).
SELECT max_credits, credits_committed, credits_billed,
       (SELECT coalesce(sum(held), 0) FROM crawl.credit_holds h WHERE h.run_id = r.id)::bigint,
       (SELECT coalesce(sum(held), 0) FROM crawl.credit_holds h WHERE h.run_id = r.id AND h.beat_at < now() - @dead::interval)::bigint,
       (SELECT min(credits_remaining) FROM crawl.credit_usage u WHERE u.run_id = r.id)
FROM crawl.runs r WHERE id = @run_id;
