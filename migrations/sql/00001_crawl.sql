-- Crawl bookkeeping: runs and the durable frontier.

-- +goose Up
CREATE SCHEMA crawl;

-- One row per harvest. A run is resumed or joined by id.
CREATE TABLE crawl.runs (
    id            bigserial PRIMARY KEY,
    job_name      text        NOT NULL,
    job           jsonb       NOT NULL,          -- the job as loaded, secrets excluded
    state         text        NOT NULL DEFAULT 'running'
                  CHECK (state IN ('running', 'done', 'stopped', 'failed')),
    stop_reason   text,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);

-- The frontier: one row per list or object to fetch. A list task walks its
-- pages one by one; cursor and pages record how far it got, committed in the
-- same transaction as the rows of each page.
CREATE TABLE crawl.tasks (
    id               bigserial PRIMARY KEY,
    run_id           bigint      NOT NULL REFERENCES crawl.runs (id) ON DELETE CASCADE,
    kind             text        NOT NULL,       -- e.g. shortvideo.followers
    key              text        NOT NULL,       -- what identifies the work: handle, secUid, url...
    params           jsonb       NOT NULL DEFAULT '{}',
    depth            integer     NOT NULL DEFAULT 0,
    max_pages        integer     NOT NULL DEFAULT 0,   -- 0: no limit
    parent_id        bigint      REFERENCES crawl.tasks (id) ON DELETE SET NULL,
    state            text        NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'leased', 'done', 'failed', 'skipped')),
    reason           text,                        -- why it ended (failed, skipped, or how a list stopped)
    cursor           text        NOT NULL DEFAULT '',
    pages            integer     NOT NULL DEFAULT 0,
    items            bigint      NOT NULL DEFAULT 0,
    attempts         integer     NOT NULL DEFAULT 0,
    lease_owner      text,
    lease_token      bigint      NOT NULL DEFAULT 0, -- fencing token: bumped on every lease
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    UNIQUE (run_id, kind, key),
    CHECK ((state = 'leased') = (lease_expires_at IS NOT NULL))
);

CREATE INDEX tasks_pending_idx ON crawl.tasks (run_id, depth, id) WHERE state = 'pending';
CREATE INDEX tasks_leased_idx  ON crawl.tasks (run_id, lease_expires_at) WHERE state = 'leased';

CREATE SEQUENCE crawl.lease_tokens;

-- +goose Down
DROP SCHEMA crawl CASCADE;
