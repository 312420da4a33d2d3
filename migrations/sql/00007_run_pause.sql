-- A 429 pause shared by every process of a run.

-- +goose Up
-- paused_until is set when any process of the run gets a 429 (now() plus the
-- pause it takes) and is checked by the credit reservation every request
-- makes anyway, so processes on other machines sit out the same pause
-- without an extra round trip. Times are the database's, one clock for all.
ALTER TABLE crawl.runs ADD COLUMN paused_until timestamptz;

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN paused_until;
