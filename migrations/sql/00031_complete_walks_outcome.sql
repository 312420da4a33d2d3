-- tasks_complete_walks_idx (00025) on the outcome (00030): its predicate
-- read the reason ('end', 'empty_page'), which statements no longer match;
-- the report's lookup of a list's previous complete walk
-- (ReportFollowLists) names outcome done_end, and the planner uses a
-- partial index only when the query implies its predicate.
--
-- NO TRANSACTION: CREATE INDEX CONCURRENTLY does not block the writers and
-- cannot run in a transaction. Dropped first, then built: an interrupted
-- build leaves an INVALID index, which the DROP of a second attempt
-- removes.

-- +goose NO TRANSACTION

-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS crawl.tasks_complete_walks_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_complete_walks_idx ON crawl.tasks ((params->>'handle'), kind, run_id)
    WHERE kind IN ('shortvideo.followers', 'shortvideo.following') AND state = 'done' AND outcome = 'done_end';
COMMENT ON INDEX crawl.tasks_complete_walks_idx IS 'The complete follow-list walks of an account by run (shortvideo.follow_walks.complete): the previous complete walk of a list in one probe (crawler report, view shortvideo.follow_changes).';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS crawl.tasks_complete_walks_idx;
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_complete_walks_idx ON crawl.tasks ((params->>'handle'), kind, run_id)
    WHERE kind IN ('shortvideo.followers', 'shortvideo.following') AND state = 'done' AND reason IN ('end', 'empty_page');
COMMENT ON INDEX crawl.tasks_complete_walks_idx IS 'The complete follow-list walks of an account by run (shortvideo.follow_walks.complete): the previous complete walk of a list in one probe (crawler report, view shortvideo.follow_changes).';
