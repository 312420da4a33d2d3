-- The credits a dead process held (issue 33.3): charged by the upstream or
-- not, unknown. A process posts its billed answers at least every second
-- and at every reservation it sends; one killed (kill -9, a lost machine, a
-- stop with the database gone) leaves its hold, which covers its requests
-- in flight and its answers not yet posted. crawl.run_ledger shows it next
-- to the credits billed. 15 seconds is the hold's dead window
-- (pipeline/budget holdDead).

-- +goose Up
CREATE OR REPLACE VIEW crawl.run_ledger AS
SELECT r.id AS run_id, r.job_name, r.credits_billed,
       coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved,
       count(t.id) FILTER (WHERE t.state = 'skipped' AND t.outcome = 'skipped_fresh') AS fetches_skipped,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'skipped' AND t.outcome = 'skipped_fresh'), 0)::bigint AS credits_saved_fresh,
       count(t.id) FILTER (WHERE t.state = 'done' AND t.outcome = 'done_stop_at_seen') AS lists_stopped_at_seen,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'done' AND t.outcome = 'done_stop_at_seen'), 0)::bigint AS pages_not_walked,
       (SELECT coalesce(sum(h.held), 0) FROM crawl.credit_holds h
        WHERE h.run_id = r.id AND h.beat_at < now() - interval '15 seconds')::bigint AS credits_unknown
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
GROUP BY r.id;
COMMENT ON COLUMN crawl.run_ledger.credits_unknown IS 'Credits charged or not, unknown: what processes that died (no beat on their hold for 15 s) hold, their requests in flight and answers not yet posted (and their spare). Counted as spent; the upstream billed the run at most credits_billed + credits_unknown.';

-- +goose Down
DROP VIEW crawl.run_ledger;
CREATE VIEW crawl.run_ledger AS
SELECT r.id AS run_id, r.job_name, r.credits_billed,
       coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved,
       count(t.id) FILTER (WHERE t.state = 'skipped' AND t.outcome = 'skipped_fresh') AS fetches_skipped,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'skipped' AND t.outcome = 'skipped_fresh'), 0)::bigint AS credits_saved_fresh,
       count(t.id) FILTER (WHERE t.state = 'done' AND t.outcome = 'done_stop_at_seen') AS lists_stopped_at_seen,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'done' AND t.outcome = 'done_stop_at_seen'), 0)::bigint AS pages_not_walked
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
