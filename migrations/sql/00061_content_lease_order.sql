-- A binding budget goes first where the content grew (issue 32 point 2;
-- docs/revisit.md, "Content lists"): a content list carrying the counter
-- its parent page showed gets, when it is added to the frontier, its
-- expected yield per credit (crawl.tasks.lease_yield: the counter's move
-- since its last walk, crawl.content_walks, per credit of the pages that
-- walk bought); LeaseTasks leases a depth's other tasks first, as found,
-- then its content lists by that yield. The pending tasks' index takes the
-- new order, so a lease still reads only the head of one index range.
--
-- NO TRANSACTION: CREATE INDEX CONCURRENTLY builds the index without
-- blocking the writers of a working frontier (as 00019). Every statement
-- is idempotent; an interrupted concurrent build's INVALID leftover is
-- dropped first.

-- +goose NO TRANSACTION

-- +goose Up
ALTER TABLE crawl.tasks ADD COLUMN IF NOT EXISTS lease_yield double precision;
COMMENT ON COLUMN crawl.tasks.lease_yield IS 'A content list carrying its parent page''s counter (params count): the entries it is expected to bring per credit, set when it is added: the counter''s move since its last walk (crawl.content_walks; never walked: the counter) over that walk''s pages (never walked: 1) times the price of a page; Infinity when the counter is the one of its last walk within its refresh_after (skipped without a request). NULL for every other task. A depth''s tasks are leased NULL first (in the order found), then by lease_yield, highest first (docs/revisit.md, "Content lists").';

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index i WHERE NOT i.indisvalid
               AND i.indexrelid = to_regclass('crawl.tasks_pending_yield_idx')) THEN
        DROP INDEX crawl.tasks_pending_yield_idx;
    END IF;
END $$;
-- +goose StatementEnd

CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_pending_yield_idx ON crawl.tasks (run_id, depth, lease_yield DESC, id) WHERE state = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS crawl.tasks_pending_idx;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_pending_idx ON crawl.tasks (run_id, depth, id) WHERE state = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS crawl.tasks_pending_yield_idx;
ALTER TABLE crawl.tasks DROP COLUMN IF EXISTS lease_yield;
