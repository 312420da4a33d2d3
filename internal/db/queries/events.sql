-- Run events (package output/events, docs/events.md).

-- name: EventLockRun
-- Takes the run's row, so processes ending the run together claim its
-- event one after the other, and reads how it ended: its state, whether
-- its budget stopped it, its stop reason and its failed tasks.
SELECT r.state, r.budget_stop IS NOT NULL, coalesce(r.stop_reason, ''),
       (SELECT count(*) FROM crawl.tasks t WHERE t.run_id = r.id AND t.state = 'failed')
FROM crawl.runs r WHERE r.id = @run_id
FOR UPDATE;

-- name: EventClaim
-- The run's end, as its event: once per end (none yet since the run was
-- started, continued or joined), and only once the run has ended.
INSERT INTO crawl.run_events (run_id, outcome, exit_code)
SELECT r.id, @outcome, @exit_code
FROM crawl.runs r
WHERE r.id = @run_id AND r.state IN ('done', 'stopped', 'failed')
  AND NOT EXISTS (SELECT 1 FROM crawl.run_events e
                  WHERE e.run_id = r.id AND e.at >= greatest(r.started_at, r.resumed_at))
RETURNING id;

-- name: EventStore
-- The event's JSON, as sent.
UPDATE crawl.run_events SET payload = @payload::jsonb WHERE id = @event_id;

-- name: EventNotify
-- Listeners on @channel get @notify when the transaction commits.
SELECT pg_notify(@channel, @notify);

-- name: EventLatest
-- The latest event of run @run_id with its JSON (NULL: never stored).
SELECT id, outcome, exit_code, payload::text
FROM crawl.run_events WHERE run_id = @run_id
ORDER BY at DESC, id DESC LIMIT 1;

-- name: EventReplayNew
-- An event for a run that ended with none (it ended before its job named
-- events, or the database failed at its end): crawler events replay
-- records one.
INSERT INTO crawl.run_events (run_id, outcome, exit_code)
VALUES (@run_id, @outcome, @exit_code)
RETURNING id;

-- name: EventDelivery
INSERT INTO crawl.event_deliveries (event_id, target, replay, attempts, delivered, http_status, error, started_at)
VALUES (@event_id, @target, @replay, @attempts, @delivered, @http_status, @error, @started_at);
