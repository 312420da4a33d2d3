-- A run stopped because its credit budget was spent is not continued with
-- the same budget (issue 25.4): `crawler run JOB` within resume_within
-- exits 5 at once, changing nothing, unless the budget was raised; after
-- it, the next start is a new run with a budget of its own.

-- +goose Up
ALTER TABLE crawl.runs ADD COLUMN budget_stop bigint;
COMMENT ON COLUMN crawl.runs.budget_stop IS 'max_credits when the run last stopped because its credit budget was spent (NULL: it did not); crawler run continues it only with a larger budget.';

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN budget_stop;
