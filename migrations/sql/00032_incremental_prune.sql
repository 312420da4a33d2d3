-- crawler prune, incremental (docs/retention.md): a run whose bookkeeping
-- a prune finished removing, or whose snapshot rows a prune with
-- --snapshots finished removing, is never read again by a later prune.
-- Until now every prune went over every run pruned before, to re-examine
-- the tasks kept for reuse: a prune's cost grew with the history. Runs
-- pruned before this migration have neither mark: the next prune goes over
-- them once.

-- +goose Up
ALTER TABLE crawl.runs ADD COLUMN prune_finished_at timestamptz;
COMMENT ON COLUMN crawl.runs.prune_finished_at IS 'When crawler prune finished removing the run''s bookkeeping (pruned_at: when it began); from then on no prune reads the run''s rows: the tasks it kept for reuse are examined again through their keys, when a later run''s tasks of the same kind and key are pruned. NULL: not pruned, or a prune was interrupted (the next one finishes it).';
ALTER TABLE crawl.runs ADD COLUMN snapshots_pruned_at timestamptz;
COMMENT ON COLUMN crawl.runs.snapshots_pruned_at IS 'When crawler prune (its snapshots option) finished removing the run''s snapshot and ranking rows (but those no later row supersedes); from then on no prune reads them but through their keys, when a later run''s rows of the same key are pruned. NULL: not done.';

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN snapshots_pruned_at;
ALTER TABLE crawl.runs DROP COLUMN prune_finished_at;
