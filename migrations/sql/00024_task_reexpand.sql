-- Deterministic depth: a task found again at a smaller depth after it was
-- fetched is expanded again from what it stored (no request), so what a
-- run reaches does not depend on which worker found a task first.

-- +goose Up
ALTER TABLE crawl.tasks ADD COLUMN reexpand boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN crawl.tasks.reexpand IS 'The task was found again at a smaller depth after it was fetched (or while it was): it is to be expanded again, from stored data, at its new depth.';

-- +goose Down
ALTER TABLE crawl.tasks DROP COLUMN reexpand;
