-- A 429's pause reaches the run's other processes through the pausing
-- process's row too, read by their heartbeat every second, and not only by
-- NOTIFY: through PgBouncer in transaction pooling mode LISTEN does not
-- work (docs/pgbouncer.md).

-- +goose Up
ALTER TABLE crawl.rate_members ADD COLUMN paused_until timestamptz;
COMMENT ON COLUMN crawl.rate_members.paused_until IS 'Until when this process''s last 429 paused every process of the run (NULL: none yet).';

-- +goose Down
ALTER TABLE crawl.rate_members DROP COLUMN paused_until;
