-- Run events (docs/events.md): at a run's end, one event per end (a run
-- continued and ended again gets another), whose JSON the job's webhooks
-- receive and a PostgreSQL NOTIFY announces; and each delivery of it, so
-- an operator sees which webhook missed it and `crawler events replay`
-- sends it again. The first process to record a run's end claims the
-- event (package output/events): several processes finishing one run send
-- it once.

-- +goose Up
CREATE TABLE crawl.run_events (
    id        bigserial PRIMARY KEY,
    run_id    bigint NOT NULL REFERENCES crawl.runs(id) ON DELETE CASCADE,
    at        timestamptz NOT NULL DEFAULT now(),
    outcome   text NOT NULL,
    exit_code integer NOT NULL,
    payload   jsonb
);
CREATE INDEX run_events_run_idx ON crawl.run_events (run_id, at);
COMMENT ON TABLE crawl.run_events IS 'One row per end of a run (done, stopped at its budget, failed, interrupted): the event its job''s webhooks and NOTIFY were sent (docs/events.md). Never holds a secret: no API key, no webhook address or signing secret.';
COMMENT ON COLUMN crawl.run_events.id IS 'The event id, sent as event_id and in the X-Crawler-Event-Id header: a receiver drops an id it has seen (a replay sends the same id).';
COMMENT ON COLUMN crawl.run_events.run_id IS 'The run (crawl.runs.id) that ended.';
COMMENT ON COLUMN crawl.run_events.at IS 'When the end was claimed for this event; a run continued after it (crawl.runs.resumed_at) ends with a new event.';
COMMENT ON COLUMN crawl.run_events.outcome IS 'done, done_with_failures, budget_spent, interrupted, stopped or failed (docs/events.md).';
COMMENT ON COLUMN crawl.run_events.exit_code IS 'The exit code of crawler run for that end (0, 4, 5, 3, 3, 1 for the outcomes in order).';
COMMENT ON COLUMN crawl.run_events.payload IS 'The event''s JSON as sent to the webhooks (NOTIFY carries it too, shortened when it passes PostgreSQL''s 8000 bytes); NULL while it is being built, or when the database failed before it was stored.';

CREATE TABLE crawl.event_deliveries (
    id          bigserial PRIMARY KEY,
    event_id    bigint NOT NULL REFERENCES crawl.run_events(id) ON DELETE CASCADE,
    target      text NOT NULL,
    replay      boolean NOT NULL DEFAULT false,
    attempts    integer NOT NULL,
    delivered   boolean NOT NULL,
    http_status integer,
    error       text,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_deliveries_event_idx ON crawl.event_deliveries (event_id);
COMMENT ON TABLE crawl.event_deliveries IS 'One row per sending of an event to one target (a webhook, or NOTIFY), retries included: whether it arrived.';
COMMENT ON COLUMN crawl.event_deliveries.id IS 'The delivery id.';
COMMENT ON COLUMN crawl.event_deliveries.event_id IS 'The event (crawl.run_events.id).';
COMMENT ON COLUMN crawl.event_deliveries.target IS 'webhook N (scheme://host), N its place in events.webhooks from 1, the address''s path and query left out as they may carry a token; or notify CHANNEL.';
COMMENT ON COLUMN crawl.event_deliveries.replay IS 'Sent by crawler events replay, not at the run''s end.';
COMMENT ON COLUMN crawl.event_deliveries.attempts IS 'Requests sent (retries included); 1 for NOTIFY.';
COMMENT ON COLUMN crawl.event_deliveries.delivered IS 'True: a 2xx answer (webhook) or the NOTIFY committed.';
COMMENT ON COLUMN crawl.event_deliveries.http_status IS 'The last answer''s HTTP status; NULL: none came (refused, timed out) or NOTIFY.';
COMMENT ON COLUMN crawl.event_deliveries.error IS 'Why the last attempt failed (NULL when delivered).';
COMMENT ON COLUMN crawl.event_deliveries.started_at IS 'When the first attempt was sent.';
COMMENT ON COLUMN crawl.event_deliveries.finished_at IS 'When the delivery succeeded or was given up (events.timeout bounds it).';

-- +goose Down
DROP TABLE crawl.event_deliveries;
DROP TABLE crawl.run_events;
