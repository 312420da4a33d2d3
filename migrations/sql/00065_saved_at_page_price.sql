-- What reuse saves is counted in credits, each page at its price in the
-- job's dialect (issue 32): a list walk cut short (stop_at_seen, a content
-- list's explained rise) records its pages not walked at the page's price
-- (15 for a post's comments with replies at the real service's prices),
-- as a content list skipped unchanged already did. The ledger's
-- pages_not_walked becomes credits_not_walked: its unit changed, so a
-- query that reads it as pages fails instead of reading credits.

-- +goose Up
COMMENT ON COLUMN crawl.tasks.credits_saved IS 'Credits this task did not spend thanks to reuse, each page at its price in the job''s dialect (15 for a post''s comments with replies at the real service''s prices, else 1): 1 for an object skipped as fresh; for a content list skipped unchanged, its last walk''s pages; for a list cut short (stop_at_seen, a content list''s explained rise), the pages of the list''s last full walk (capped at max_pages) minus the pages walked now, an estimate; for a task the adaptive schedule skipped, the visit''s expected cost.';
COMMENT ON COLUMN crawl.run_ledger.credits_saved IS 'Credits not spent thanks to reuse (sum of crawl.tasks.credits_saved): credits_saved_fresh, credits_not_walked, the content lists skipped unchanged and the tasks the adaptive schedule skipped.';
ALTER VIEW crawl.run_ledger RENAME COLUMN pages_not_walked TO credits_not_walked;
COMMENT ON COLUMN crawl.run_ledger.credits_not_walked IS 'Credits of the pages the lists stop_at_seen (or a content list''s explained rise) cut short did not walk, each at its price in the job''s dialect: per list, its last full walk''s pages (capped at max_pages) minus the pages walked, an estimate.';

-- +goose Down
ALTER VIEW crawl.run_ledger RENAME COLUMN credits_not_walked TO pages_not_walked;
COMMENT ON COLUMN crawl.tasks.credits_saved IS 'Credits this task did not spend thanks to reuse: 1 for an object skipped as fresh; for a list stopped by stop_at_seen, the pages of the list''s last full walk (capped at max_pages) minus the pages walked now, an estimate.';
COMMENT ON COLUMN crawl.run_ledger.credits_saved IS 'Credits not spent thanks to reuse: credits_saved_fresh + pages_not_walked (sum of crawl.tasks.credits_saved).';
COMMENT ON COLUMN crawl.run_ledger.pages_not_walked IS 'Estimated pages those lists did not walk: per list, its last full walk''s pages (capped at max_pages) minus the pages walked.';
