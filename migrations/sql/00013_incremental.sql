-- Incremental harvests (README "Repeat harvests"): refresh_after skips an
-- entity an earlier run fetched recently, stop_at_seen ends a newest-first
-- list at its first page of entries stored by earlier runs, and the run's
-- ledger shows the credits this saved next to those it spent.

-- +goose Up
ALTER TABLE crawl.tasks ADD COLUMN refresh_after interval;
ALTER TABLE crawl.tasks ADD COLUMN credits_saved integer NOT NULL DEFAULT 0 CHECK (credits_saved >= 0);
COMMENT ON COLUMN crawl.tasks.refresh_after IS 'The task''s refresh_after window, from the seed list or edge that created it (else reuse.refresh_after): when an earlier run fetched the same kind and key successfully within it, the task ends skipped with reason "fresh: ..." and buys nothing. NULL: always fetched.';
COMMENT ON COLUMN crawl.tasks.credits_saved IS 'Credits this task did not spend thanks to reuse: 1 for an object skipped as fresh; for a list stopped by stop_at_seen, the pages of the list''s last full walk (capped at max_pages) minus the pages walked now, an estimate.';

-- The last successful fetch of a kind and key, across runs (refresh_after,
-- stop_at_seen's last full walk).
CREATE INDEX tasks_done_kind_key_idx ON crawl.tasks (kind, key, finished_at) WHERE state = 'done';

CREATE VIEW crawl.run_ledger AS
SELECT r.id AS run_id, r.job_name, r.credits_billed,
       coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved,
       count(t.id) FILTER (WHERE t.state = 'skipped' AND t.reason LIKE 'fresh:%') AS fetches_skipped,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'skipped' AND t.reason LIKE 'fresh:%'), 0)::bigint AS credits_saved_fresh,
       count(t.id) FILTER (WHERE t.state = 'done' AND t.reason LIKE 'stop_at_seen:%') AS lists_stopped_at_seen,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'done' AND t.reason LIKE 'stop_at_seen:%'), 0)::bigint AS pages_not_walked
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
GROUP BY r.id;
COMMENT ON VIEW crawl.run_ledger IS 'Per run: credits spent (billed) next to credits saved by refresh_after and stop_at_seen (crawler status shows it).';
COMMENT ON COLUMN crawl.run_ledger.run_id IS 'The run (crawl.runs.id).';
COMMENT ON COLUMN crawl.run_ledger.job_name IS 'The job''s name.';
COMMENT ON COLUMN crawl.run_ledger.credits_billed IS 'Credits the upstream billed the run (crawl.runs.credits_billed).';
COMMENT ON COLUMN crawl.run_ledger.credits_saved IS 'Credits not spent thanks to reuse: credits_saved_fresh + pages_not_walked (sum of crawl.tasks.credits_saved).';
COMMENT ON COLUMN crawl.run_ledger.fetches_skipped IS 'Tasks skipped because an earlier run fetched their entity within refresh_after.';
COMMENT ON COLUMN crawl.run_ledger.credits_saved_fresh IS 'Credits saved by those skipped fetches (1 per object).';
COMMENT ON COLUMN crawl.run_ledger.lists_stopped_at_seen IS 'Lists that stop_at_seen ended at a page of entries stored by earlier runs.';
COMMENT ON COLUMN crawl.run_ledger.pages_not_walked IS 'Estimated pages those lists did not walk: per list, its last full walk''s pages (capped at max_pages) minus the pages walked.';

-- +goose Down
DROP VIEW crawl.run_ledger;
DROP INDEX crawl.tasks_done_kind_key_idx;
ALTER TABLE crawl.tasks DROP COLUMN credits_saved;
ALTER TABLE crawl.tasks DROP COLUMN refresh_after;
