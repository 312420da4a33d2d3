-- The adaptive limit of requests in flight (package sources/concurrency),
-- watched over a run: each progress sample records the process's limit,
-- its requests in flight over the interval and why the limit last moved;
-- its crawl.run_processes row keeps the latest, for crawler status. NULL
-- in the samples of processes older than this migration.

-- +goose Up
ALTER TABLE crawl.run_samples
    ADD COLUMN in_flight double precision,
    ADD COLUMN concurrency_limit integer,
    ADD COLUMN concurrency_move text,
    ADD COLUMN concurrency_moves jsonb;
COMMENT ON COLUMN crawl.run_samples.in_flight IS 'Requests this process had in flight on average since its previous sample (slots of the adaptive limit held: sent and not yet answered, or waiting for a rate token or a 429 pause).';
COMMENT ON COLUMN crawl.run_samples.concurrency_limit IS 'The adaptive limit of requests in flight of this process at that moment.';
COMMENT ON COLUMN crawl.run_samples.concurrency_move IS 'The latest move of the limit and why, as reason and direction: start up (doubling), latency up or down (the answer times), rate down (held to what the rate control lets through), errors down (a burst of 5xx or timeouts), ceiling down (limits.workers); NULL before the first.';
COMMENT ON COLUMN crawl.run_samples.concurrency_moves IS 'The moves of the limit so far in this process, by move (as concurrency_move) to their count (cumulative).';
ALTER TABLE crawl.run_processes
    ADD COLUMN in_flight double precision,
    ADD COLUMN concurrency_limit integer,
    ADD COLUMN concurrency_move text;
COMMENT ON COLUMN crawl.run_processes.in_flight IS 'Requests in flight on average over the interval before its latest sample (as crawl.run_samples.in_flight).';
COMMENT ON COLUMN crawl.run_processes.concurrency_limit IS 'Its adaptive limit of requests in flight as of its latest sample.';
COMMENT ON COLUMN crawl.run_processes.concurrency_move IS 'The latest move of its limit and why, as of its latest sample (as crawl.run_samples.concurrency_move).';

-- +goose Down
ALTER TABLE crawl.run_processes DROP COLUMN in_flight, DROP COLUMN concurrency_limit, DROP COLUMN concurrency_move;
ALTER TABLE crawl.run_samples DROP COLUMN in_flight, DROP COLUMN concurrency_limit, DROP COLUMN concurrency_move, DROP COLUMN concurrency_moves;
