-- Credit budget and accounting per run and endpoint.

-- +goose Up
-- credits_committed counts reservations not given back: billed requests,
-- requests in flight, and requests whose outcome is unknown (a timeout may
-- have been charged). It never exceeds max_credits; every process of the run
-- reserves here before sending.
ALTER TABLE crawl.runs
    ADD COLUMN max_credits       bigint CHECK (max_credits >= 0),
    ADD COLUMN credits_committed bigint NOT NULL DEFAULT 0,
    ADD COLUMN credits_billed    bigint NOT NULL DEFAULT 0;

-- What each endpoint cost a run: requests by outcome, and the last balance
-- the upstream reported (credits_remaining), when it reports one.
CREATE TABLE crawl.credit_usage (
    run_id             bigint  NOT NULL REFERENCES crawl.runs (id) ON DELETE CASCADE,
    endpoint           text    NOT NULL,
    requests           bigint  NOT NULL DEFAULT 0,   -- attempts that got an HTTP answer
    billed             bigint  NOT NULL DEFAULT 0,   -- attempts that cost a credit
    free               bigint  NOT NULL DEFAULT 0,   -- documented free answers (private photo-sharing profile)
    rate_limited       bigint  NOT NULL DEFAULT 0,   -- 429s
    errors             bigint  NOT NULL DEFAULT 0,   -- other non-2xx answers
    credits_charged    bigint  NOT NULL DEFAULT 0,   -- sum of credits_charged, where bodies carry it
    credits_remaining  bigint,                       -- last credits_remaining seen
    PRIMARY KEY (run_id, endpoint)
);

-- +goose Down
DROP TABLE crawl.credit_usage;
ALTER TABLE crawl.runs DROP COLUMN max_credits, DROP COLUMN credits_committed, DROP COLUMN credits_billed;
