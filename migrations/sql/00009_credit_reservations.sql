-- Credit reservations belong to the lease that made them, so that those of a
-- process that died (kill -9, a lost machine) come back to the budget when
-- its lease is taken over, released or ended, instead of staying spent.

-- +goose Up
-- credits_held counts the reservations of the task's current lease
-- (lease_token) not yet settled: at most one per request in flight, or one
-- whose answer was lost (it is reused by the retry). The invariant is
-- runs.credits_committed = runs.credits_billed + sum(tasks.credits_held).
ALTER TABLE crawl.tasks ADD COLUMN credits_held integer NOT NULL DEFAULT 0 CHECK (credits_held >= 0);
COMMENT ON COLUMN crawl.tasks.credits_held IS 'Credits reserved by the current lease for requests whose answer is not yet settled; given back to the run when the lease ends unsettled.';

-- Until now a reservation whose answer never arrived (a timeout, a killed
-- process) stayed committed for good. Give those back on runs no live
-- process works on; a run still being worked keeps its count.
UPDATE crawl.runs r SET credits_committed = r.credits_billed
WHERE r.credits_committed <> r.credits_billed AND NOT EXISTS (
    SELECT 1 FROM crawl.tasks t
    WHERE t.run_id = r.id AND t.state = 'leased' AND t.lease_expires_at > now());

-- A reservation's two writes (the run's counter and the lease's) must both
-- happen or neither: the reserve statement calls this to abort itself when
-- the lease it reserves for is gone (it returns 1 otherwise).
-- +goose StatementBegin
CREATE FUNCTION crawl.expect_lease(n bigint) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    IF n <> 1 THEN
        RAISE EXCEPTION 'lease lost while reserving a credit' USING ERRCODE = 'CR002';
    END IF;
    RETURN 1;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION crawl.expect_lease(bigint);
ALTER TABLE crawl.tasks DROP COLUMN credits_held;
