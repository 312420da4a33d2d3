-- The credit budget as two-phase transfers (pipeline/budget.go): each
-- process holds a reservation of the run's budget (crawl.credit_holds) from
-- which its requests take what they are expected to cost; billed answers
-- move credits from the hold to billed (post), and a process gives back
-- what it does not need (void). A grant is never more than the budget has
-- left, so runs.credits_committed = credits_billed + sum(held) stays at or
-- below max_credits whatever the price of a request or the number of
-- processes; only an answer that costs more than its request reserved, with
-- no spare credit in its hold to cover it, can take it above.
--
-- A process that dies (kill -9) keeps its hold: whether its requests in
-- flight were billed is unknown, so their credits stay spent rather than be
-- spent twice. The per-lease reservations of migration 00009 are given back.

-- +goose Up
CREATE TABLE crawl.credit_holds (
    run_id    bigint      NOT NULL REFERENCES crawl.runs (id) ON DELETE CASCADE,
    owner     text        NOT NULL,
    held      bigint      NOT NULL DEFAULT 0 CHECK (held >= 0),
    in_flight bigint      NOT NULL DEFAULT 0 CHECK (in_flight >= 0),
    beat_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, owner)
);
COMMENT ON TABLE crawl.credit_holds IS 'Each process''s reservation of its run''s credit budget: runs.credits_committed = credits_billed + sum(held). A dead process''s hold stays spent.';
COMMENT ON COLUMN crawl.credit_holds.run_id IS 'The run whose budget is held.';
COMMENT ON COLUMN crawl.credit_holds.owner IS 'The process (its lease owner string, host:pid:random).';
COMMENT ON COLUMN crawl.credit_holds.held IS 'Credits reserved by the process and not yet billed or given back: its requests in flight, billed answers not yet posted, and spare credits.';
COMMENT ON COLUMN crawl.credit_holds.in_flight IS 'Of held, what the process''s requests in flight and its billed answers not yet posted are expected to cost, as of beat_at (what other processes count as spent when admitting a revisit).';
COMMENT ON COLUMN crawl.credit_holds.beat_at IS 'The process''s last statement on its hold: a hold whose process stopped beating counts as spent.';

UPDATE crawl.runs r SET credits_committed = r.credits_committed - t.held
FROM (SELECT run_id, sum(credits_held) AS held FROM crawl.tasks WHERE credits_held > 0 GROUP BY run_id) t
WHERE r.id = t.run_id;
UPDATE crawl.tasks SET credits_held = 0 WHERE credits_held > 0;
COMMENT ON COLUMN crawl.tasks.credits_held IS 'Unused since migration 00027 (always 0): credits are held per process in crawl.credit_holds.';
COMMENT ON COLUMN crawl.runs.credits_committed IS 'Credits billed plus those held by processes (crawl.credit_holds.held). Never above max_credits, but for answers that cost more than their request reserved.';

-- One statement of a process on its hold, under the run's row lock (the
-- budget check): post p_billed billed credits (from the hold, the excess
-- beyond it straight to the run), void up to p_void spare credits, then
-- grant p_need credits and up to p_want when at least p_need are left
-- (none otherwise), and record what the process has in flight. It returns what
-- it granted, the hold and the run's counters after it, and what the other
-- processes hold: dead ones (no beat within p_dead) in all, live ones in
-- flight.
-- +goose StatementBegin
CREATE FUNCTION crawl.hold_credits(p_run bigint, p_owner text, p_billed bigint, p_void bigint, p_want bigint, p_need bigint,
                                   p_in_flight bigint, p_dead interval)
RETURNS TABLE (granted bigint, held bigint, billed bigint, committed bigint, max_credits bigint, dead_held bigint, others_in_flight bigint)
LANGUAGE plpgsql AS $$
DECLARE
    m bigint; c bigint; b bigint; h bigint; take bigint; v bigint; g bigint := 0;
BEGIN
    SELECT r.max_credits, r.credits_committed, r.credits_billed INTO m, c, b FROM crawl.runs r WHERE r.id = p_run FOR UPDATE;
    INSERT INTO crawl.credit_holds AS x (run_id, owner) VALUES (p_run, p_owner) ON CONFLICT (run_id, owner) DO NOTHING;
    SELECT x.held INTO h FROM crawl.credit_holds x WHERE x.run_id = p_run AND x.owner = p_owner FOR UPDATE;
    take := least(h, p_billed);
    v := least(h - take, p_void);
    h := h - take - v;
    c := c + p_billed - take - v;
    b := b + p_billed;
    -- Beyond its need a process takes at most a quarter of what is left,
    -- so that near the budget no process holds what another lacks.
    IF p_need > 0 AND (m IS NULL OR m - c >= p_need) THEN
        g := CASE WHEN m IS NULL THEN greatest(p_want, p_need)
                  ELSE p_need + least(greatest(p_want - p_need, 0), (m - c - p_need) / 4) END;
    END IF;
    h := h + g;
    c := c + g;
    IF p_billed <> 0 OR v <> 0 OR g <> 0 THEN
        UPDATE crawl.runs r SET credits_billed = b, credits_committed = c WHERE r.id = p_run;
    END IF;
    UPDATE crawl.credit_holds x SET held = h, in_flight = least(p_in_flight, h), beat_at = now()
    WHERE x.run_id = p_run AND x.owner = p_owner;
    RETURN QUERY
    SELECT g, h, b, c, m,
           coalesce(sum(o.held) FILTER (WHERE o.beat_at < now() - p_dead), 0)::bigint,
           coalesce(sum(o.in_flight) FILTER (WHERE o.beat_at >= now() - p_dead), 0)::bigint
    FROM crawl.credit_holds o WHERE o.run_id = p_run AND o.owner <> p_owner;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION crawl.hold_credits(bigint, text, bigint, bigint, bigint, bigint, bigint, interval) IS 'A process''s statement on its credit hold: post billed credits, void spare ones, grant new ones within max_credits, record what is in flight (pipeline/budget.go).';

-- +goose Down
DROP FUNCTION crawl.hold_credits(bigint, text, bigint, bigint, bigint, bigint, bigint, interval);
UPDATE crawl.runs r SET credits_committed = r.credits_committed - h.held
FROM (SELECT run_id, sum(held) AS held FROM crawl.credit_holds GROUP BY run_id) h WHERE r.id = h.run_id;
DROP TABLE crawl.credit_holds;
COMMENT ON COLUMN crawl.runs.credits_committed IS 'Credits reserved and not given back: billed plus the reservations of live leases (tasks.credits_held). Never above max_credits.';
COMMENT ON COLUMN crawl.tasks.credits_held IS 'Credits reserved by the current lease for requests whose answer is not yet settled; given back to the run when the lease ends unsettled.';
