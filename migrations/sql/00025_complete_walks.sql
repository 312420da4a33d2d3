-- The previous complete walk of a follow list through an index, for the run
-- report's "What changed" (ReportFollowLists) and the views of 00020
-- (follow_changes): tasks_follow_lists_idx holds every walk of a list, so
-- finding the latest complete one before a run read, and filtered, every
-- incomplete walk in between. A list cut by its page limit or by
-- stop_at_seen every night is walked completely rarely or never: that
-- lookup read the list's whole history. This index holds only complete
-- walks (follow_walks.complete), so it is one probe.
--
-- NO TRANSACTION: CREATE INDEX CONCURRENTLY does not block the writers and
-- cannot run in a transaction. An interrupted build leaves an INVALID
-- index that IF NOT EXISTS would take for done: it is dropped first.

-- +goose NO TRANSACTION

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index x WHERE NOT x.indisvalid AND x.indexrelid = to_regclass('crawl.tasks_complete_walks_idx')) THEN
        DROP INDEX crawl.tasks_complete_walks_idx;
    END IF;
END $$;
-- +goose StatementEnd

CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_complete_walks_idx ON crawl.tasks ((params->>'handle'), kind, run_id)
    WHERE kind IN ('shortvideo.followers', 'shortvideo.following') AND state = 'done' AND reason IN ('end', 'empty_page');
COMMENT ON INDEX crawl.tasks_complete_walks_idx IS 'The complete follow-list walks of an account by run (shortvideo.follow_walks.complete): the previous complete walk of a list in one probe (crawler report, view shortvideo.follow_changes).';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS crawl.tasks_complete_walks_idx;
