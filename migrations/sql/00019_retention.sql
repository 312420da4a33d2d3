-- Retention (`crawler prune`, docs/retention.md): the indexes that deleting
-- a run's rows needs, and the mark of a pruned run.
--
-- NO TRANSACTION: CREATE INDEX CONCURRENTLY builds an index without
-- blocking writers, so a nightly run can apply this to a table of a year of
-- tasks while another process works; it cannot run inside a transaction.
-- Every statement is idempotent, so a migration interrupted half way is
-- applied again whole. An interrupted concurrent build leaves an INVALID
-- index that IF NOT EXISTS would take for done: such a leftover is dropped
-- first.

-- +goose NO TRANSACTION

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index i WHERE NOT i.indisvalid
               AND i.indexrelid = to_regclass('crawl.tasks_parent_idx')) THEN
        DROP INDEX crawl.tasks_parent_idx;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i WHERE NOT i.indisvalid
               AND i.indexrelid = to_regclass('shortvideo.user_snapshots_run_idx')) THEN
        DROP INDEX shortvideo.user_snapshots_run_idx;
    END IF;
END $$;
-- +goose StatementEnd

-- Deleting a task sets parent_id to NULL in the tasks it discovered (the
-- foreign key's ON DELETE SET NULL): without this index each deleted row
-- scans the whole table for its children.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_parent_idx ON crawl.tasks (parent_id) WHERE parent_id IS NOT NULL;

-- The only snapshot table without an index by run (its key leads with the
-- account): a run's snapshots, to prune or to read, were a full scan.
CREATE INDEX CONCURRENTLY IF NOT EXISTS user_snapshots_run_idx ON shortvideo.user_snapshots (run_id);

ALTER TABLE crawl.runs ADD COLUMN IF NOT EXISTS pruned_at timestamptz;
COMMENT ON COLUMN crawl.runs.pruned_at IS 'When crawler prune first removed the run''s bookkeeping (tasks, samples, page archive...; docs/retention.md); NULL: never pruned. The row stays, so data rows naming the run still resolve, and crawler runs lists it.';
ALTER TABLE crawl.runs ADD COLUMN IF NOT EXISTS pruned_credits_saved bigint;
COMMENT ON COLUMN crawl.runs.pruned_credits_saved IS 'The run''s credits saved by reuse (sum of its tasks'' credits_saved) as they were when crawler prune first removed its tasks; NULL: never pruned. crawler runs shows it for a pruned run.';

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN IF EXISTS pruned_credits_saved;
ALTER TABLE crawl.runs DROP COLUMN IF EXISTS pruned_at;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.user_snapshots_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS crawl.tasks_parent_idx;
