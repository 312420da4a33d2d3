-- The same command is safe to rerun (issue 11): `crawler run JOB` finds the
-- job's interrupted run and continues it instead of starting over. A run
-- records the fingerprint of what it harvests, so a job whose seeds or
-- expansion changed is not continued with the old definition, and a run that
-- is not continued (too old, or superseded) is marked abandoned.

-- +goose Up
ALTER TABLE crawl.runs ADD COLUMN fingerprint text;
COMMENT ON COLUMN crawl.runs.fingerprint IS 'SHA-256 (hex) of what the run harvests: its seed tasks (sorted), the expand section and limits.max_depth. A later `crawler run` of the job continues the run only when the job file gives the same fingerprint. NULL for runs created before migration 00012.';

ALTER TABLE crawl.runs DROP CONSTRAINT runs_state_check;
ALTER TABLE crawl.runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('running', 'done', 'stopped', 'failed', 'abandoned'));
COMMENT ON COLUMN crawl.runs.state IS 'running, done (frontier empty), stopped (resumable: budget, signal, refused key, outage), failed, or abandoned (an unfinished run that `crawler run` did not continue: older than resume_within, its job changed, or --new-run; stop_reason says which). `crawler run --resume ID` still works on any of them.';

-- The find-or-create of `crawler run` looks up the latest run of a job.
CREATE INDEX runs_job_name_idx ON crawl.runs (job_name, id);

-- +goose Down
DROP INDEX crawl.runs_job_name_idx;
UPDATE crawl.runs SET state = 'stopped' WHERE state = 'abandoned';
ALTER TABLE crawl.runs DROP CONSTRAINT runs_state_check;
ALTER TABLE crawl.runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('running', 'done', 'stopped', 'failed'));
COMMENT ON COLUMN crawl.runs.state IS 'running, done (frontier empty), stopped (resumable: budget, signal, refused key, outage) or failed.';
ALTER TABLE crawl.runs DROP COLUMN fingerprint;
