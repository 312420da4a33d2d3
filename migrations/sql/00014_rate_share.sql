-- One key's quota shared by the processes working on one run (issue 10):
-- the estimate the leading process measured, and a heartbeat per live
-- process, so that each sends its share and a process that joins or dies
-- is absorbed within seconds. Written once a second per process (and once
-- per 429 event), never per request.

-- +goose Up
CREATE TABLE crawl.rate_quota (
    run_id     bigint PRIMARY KEY,
    rate       double precision NOT NULL CHECK (rate > 0),
    burst      double precision NOT NULL CHECK (burst >= 1),
    measured   boolean NOT NULL,
    probe_at   timestamptz NOT NULL,
    hold       interval NOT NULL,
    version    bigint NOT NULL DEFAULT 1,
    updated_by text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE crawl.rate_quota IS 'The upstream quota of a run''s API key as its processes share it: the latest estimate published by the leading process (the oldest live one). One row per run; no key, no key hash.';
COMMENT ON COLUMN crawl.rate_quota.run_id IS 'The run (crawl.runs.id) whose processes share this estimate.';
COMMENT ON COLUMN crawl.rate_quota.rate IS 'Estimated quota of the key, requests per second, for all processes together.';
COMMENT ON COLUMN crawl.rate_quota.burst IS 'Estimated burst of the upstream''s token bucket, in requests (at least 1).';
COMMENT ON COLUMN crawl.rate_quota.measured IS 'Whether rate was measured from the successes before a 429 (false: a guess, while the quota is being found).';
COMMENT ON COLUMN crawl.rate_quota.probe_at IS 'When the hold at this estimate ends and the leader probes above it.';
COMMENT ON COLUMN crawl.rate_quota.hold IS 'Length of the hold that ends at probe_at (it grows while probes find the same quota).';
COMMENT ON COLUMN crawl.rate_quota.version IS 'Incremented by each publication; processes adopt an estimate when it changes.';
COMMENT ON COLUMN crawl.rate_quota.updated_by IS 'Lease owner tag (host:pid:random) of the process that published the estimate.';
COMMENT ON COLUMN crawl.rate_quota.updated_at IS 'When the estimate was published.';

CREATE TABLE crawl.rate_members (
    run_id       bigint NOT NULL,
    owner        text NOT NULL,
    joined_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    weight       integer NOT NULL DEFAULT 0 CHECK (weight >= 0),
    statements   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, owner)
);
COMMENT ON TABLE crawl.rate_members IS 'Processes working on a run and sharing its key''s quota: one row per process, its heartbeat renewed every second. A process is live while its heartbeat is under 3 s old; each live follower sends its weight''s part of the quota and the leader the rest.';
COMMENT ON COLUMN crawl.rate_members.run_id IS 'The run (crawl.runs.id) the process works on.';
COMMENT ON COLUMN crawl.rate_members.owner IS 'Lease owner tag of the process (host:pid:random), as in crawl.tasks.lease_owner.';
COMMENT ON COLUMN crawl.rate_members.joined_at IS 'When the process joined; the oldest live process leads (measures the quota for all).';
COMMENT ON COLUMN crawl.rate_members.heartbeat_at IS 'Last heartbeat of the process; older than 3 s, it counts as dead (a process that stops sets it to the epoch). Rows stay, a few per run.';
COMMENT ON COLUMN crawl.rate_members.weight IS 'Tasks the process''s workers hold, as of its last heartbeat: each live process sends weight/sum(weight) of the quota; an idle one (0) none, and it does not lead.';
COMMENT ON COLUMN crawl.rate_members.statements IS 'Statements the process has sent to share the quota (heartbeats, publications, pause notifications), as of its last heartbeat: the database cost of sharing.';

-- +goose Down
DROP TABLE crawl.rate_members;
DROP TABLE crawl.rate_quota;
