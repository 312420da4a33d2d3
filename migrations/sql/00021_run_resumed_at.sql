-- A run continued or joined by `crawler run` is active from that moment:
-- without a stamp of it, a run last active just beyond resume_within
-- looked idle to a second start a moment after the first continued it,
-- which abandoned it and started another run of the same job.

-- +goose Up
ALTER TABLE crawl.runs ADD COLUMN resumed_at timestamptz;
COMMENT ON COLUMN crawl.runs.resumed_at IS 'When crawler run last continued or joined the run: activity, like its start and its tasks'' changes.';

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN resumed_at;
