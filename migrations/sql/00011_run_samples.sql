-- What a run did while it ran, for `crawler status`, `crawler runs` and the
-- run report: the processes that worked on it (with their crawler version
-- and their own counters) and a progress sample every few seconds.
--
-- Like crawl.tasks, these tables hold the run id as a plain column, not a
-- foreign key (see 00006): a sample is written every few seconds by every
-- process while the run's row is updated on every request.

-- +goose Up
CREATE TABLE crawl.run_processes (
    run_id          bigint      NOT NULL,
    owner           text        NOT NULL,
    crawler_version text        NOT NULL,
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    state           text,
    pages           bigint      NOT NULL DEFAULT 0,
    rows_written    bigint      NOT NULL DEFAULT 0,
    requests        bigint      NOT NULL DEFAULT 0,
    rate_limited    bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, owner)
);
COMMENT ON TABLE crawl.run_processes IS 'One row per process that worked on a run (crawler run, or run --resume joining it): its version and its counters as of its latest sample.';
COMMENT ON COLUMN crawl.run_processes.run_id IS 'The run (crawl.runs.id).';
COMMENT ON COLUMN crawl.run_processes.owner IS 'The process''s lease owner tag (host:pid:random), as in crawl.tasks.lease_owner.';
COMMENT ON COLUMN crawl.run_processes.crawler_version IS 'The crawler''s version from its build info (module version, vcs revision, dirty flag).';
COMMENT ON COLUMN crawl.run_processes.started_at IS 'When the process started working on the run.';
COMMENT ON COLUMN crawl.run_processes.finished_at IS 'When it stopped working on the run; NULL while it works (or if it died).';
COMMENT ON COLUMN crawl.run_processes.state IS 'How its work ended as it saw it: done, stopped, failed, running (others still work); NULL while it works.';
COMMENT ON COLUMN crawl.run_processes.pages IS 'Pages (or objects) this process committed, as of its latest sample.';
COMMENT ON COLUMN crawl.run_processes.rows_written IS 'Rows this process wrote to the data tables, as of its latest sample.';
COMMENT ON COLUMN crawl.run_processes.requests IS 'Requests this process sent that got an answer, as of its latest sample.';
COMMENT ON COLUMN crawl.run_processes.rate_limited IS '429 answers this process got, as of its latest sample.';

CREATE TABLE crawl.run_samples (
    id                bigserial        PRIMARY KEY,
    run_id            bigint           NOT NULL,
    owner             text             NOT NULL,
    at                timestamptz      NOT NULL DEFAULT now(),
    pages             bigint           NOT NULL,
    rows_written      bigint           NOT NULL,
    requests          bigint           NOT NULL,
    rate_limited      bigint           NOT NULL,
    pause_seconds     double precision NOT NULL,
    outage_seconds    double precision NOT NULL,
    rate              double precision NOT NULL,
    credits_billed    bigint           NOT NULL,
    credits_committed bigint           NOT NULL,
    tasks_pending     bigint           NOT NULL,
    tasks_leased      bigint           NOT NULL,
    tasks_done        bigint           NOT NULL,
    tasks_failed      bigint           NOT NULL,
    tasks_skipped     bigint           NOT NULL
);
CREATE INDEX run_samples_run_idx ON crawl.run_samples (run_id, at);
COMMENT ON TABLE crawl.run_samples IS 'A progress sample of a run, one per process every few seconds (crawler run --sample-interval) and one when the process ends. Per-process counters are cumulative since the process started; run-wide figures are the whole run''s at that moment.';
COMMENT ON COLUMN crawl.run_samples.id IS 'Insertion order.';
COMMENT ON COLUMN crawl.run_samples.run_id IS 'The run (crawl.runs.id).';
COMMENT ON COLUMN crawl.run_samples.owner IS 'The process that took the sample (crawl.run_processes.owner).';
COMMENT ON COLUMN crawl.run_samples.at IS 'When the sample was taken.';
COMMENT ON COLUMN crawl.run_samples.pages IS 'Pages this process committed so far (cumulative; sum the latest of each process for the run).';
COMMENT ON COLUMN crawl.run_samples.rows_written IS 'Rows this process wrote so far (cumulative).';
COMMENT ON COLUMN crawl.run_samples.requests IS 'Requests this process sent that got an answer so far (cumulative).';
COMMENT ON COLUMN crawl.run_samples.rate_limited IS '429 answers this process got so far (cumulative).';
COMMENT ON COLUMN crawl.run_samples.pause_seconds IS 'Seconds this process''s workers were paused by 429s so far (cumulative).';
COMMENT ON COLUMN crawl.run_samples.outage_seconds IS 'Seconds this process found the upstream unreachable so far (cumulative).';
COMMENT ON COLUMN crawl.run_samples.rate IS 'The rate control''s request ceiling at that moment, requests/s (0: none).';
COMMENT ON COLUMN crawl.run_samples.credits_billed IS 'Credits billed to the whole run so far (crawl.runs.credits_billed).';
COMMENT ON COLUMN crawl.run_samples.credits_committed IS 'Credits billed plus reserved by requests in flight, whole run (crawl.runs.credits_committed).';
COMMENT ON COLUMN crawl.run_samples.tasks_pending IS 'Tasks of the run waiting to be worked.';
COMMENT ON COLUMN crawl.run_samples.tasks_leased IS 'Tasks of the run being worked.';
COMMENT ON COLUMN crawl.run_samples.tasks_done IS 'Tasks of the run done.';
COMMENT ON COLUMN crawl.run_samples.tasks_failed IS 'Tasks of the run failed.';
COMMENT ON COLUMN crawl.run_samples.tasks_skipped IS 'Tasks of the run skipped (404, free private profile).';

-- +goose Down
DROP TABLE crawl.run_samples;
DROP TABLE crawl.run_processes;
