-- One key's quota shared by the processes of a run (package
-- pipeline/quota): crawl.rate_quota and crawl.rate_members. A pause after a
-- 429 and a new estimate are announced on the channel crawl_rate, payload
-- "<run_id> <owner> pause <milliseconds>" or "<run_id> <owner> sync".

-- name: RateSync
-- A process's heartbeat, once a second: renews its row (joining on the
-- first) with its weight (the tasks its workers hold), publishes its
-- estimate when @publish, tells the others to read the row at once when it
-- published or @announce (its weight changed much), and
-- returns how many processes are live (heartbeat newer than @dead_s
-- seconds; the others counted only when busy, weight > 0), the total
-- weight, whether this one leads (the oldest of them), the shared
-- estimate and how long another process's 429 still pauses the run. Times go as seconds from the server's now(), so the processes'
-- clocks need not agree.
WITH me AS (
    INSERT INTO crawl.rate_members AS m (run_id, owner, weight, statements) VALUES (@run_id, @owner, @weight, @statements)
    ON CONFLICT (run_id, owner) DO UPDATE SET heartbeat_at = now(), weight = excluded.weight, statements = excluded.statements
    RETURNING joined_at
), live AS (
    SELECT owner, joined_at, weight FROM crawl.rate_members
    WHERE run_id = @run_id AND owner <> @owner AND weight > 0 AND heartbeat_at >= now() - make_interval(secs => @dead_s::float8)
), pub AS (
    INSERT INTO crawl.rate_quota AS q (run_id, rate, burst, measured, probe_at, hold, updated_by)
    SELECT @run_id, @rate::float8, @burst::float8, @measured::boolean,
           now() + make_interval(secs => @probe_in_s::float8), make_interval(secs => @hold_s::float8), @owner
    WHERE @publish::boolean
    ON CONFLICT (run_id) DO UPDATE SET rate = excluded.rate, burst = greatest(q.burst, excluded.burst),
        measured = excluded.measured, probe_at = excluded.probe_at, hold = excluded.hold,
        version = q.version + 1, updated_by = excluded.updated_by, updated_at = now()
    RETURNING rate, burst, measured, probe_at, hold, version
), cur AS (
    SELECT * FROM pub
    UNION ALL
    SELECT rate, burst, measured, probe_at, hold, version FROM crawl.rate_quota
    WHERE run_id = @run_id AND NOT EXISTS (SELECT 1 FROM pub)
), told AS (
    SELECT pg_notify('crawl_rate', @run_id::text || ' ' || @owner || ' sync') WHERE @publish::boolean OR @announce::boolean
)
SELECT (SELECT count(*) FROM live)::int + 1,
       coalesce((SELECT sum(weight) FROM live), 0)::int + @weight::int,
       @weight::int > 0 AND NOT EXISTS (SELECT 1 FROM live l, me WHERE l.joined_at < me.joined_at OR (l.joined_at = me.joined_at AND l.owner < @owner)),
       coalesce(c.rate, 0)::float8, coalesce(c.burst, 0)::float8, coalesce(c.measured, false),
       coalesce(extract(epoch FROM c.probe_at - now()), 0)::float8, coalesce(extract(epoch FROM c.hold), 0)::float8,
       coalesce(c.version, 0)::bigint, (SELECT count(*) FROM told)::int,
       coalesce((SELECT extract(epoch FROM max(m.paused_until) - now()) FROM crawl.rate_members m
                 WHERE m.run_id = @run_id AND m.owner <> @owner AND m.paused_until > now()), 0)::float8
FROM (SELECT 1) x LEFT JOIN cur c ON true;

-- name: RateLeave
-- A process that stops: the others count it out at their next heartbeat.
UPDATE crawl.rate_members SET heartbeat_at = 'epoch', weight = 0, statements = @statements
WHERE run_id = @run_id AND owner = @owner;

-- name: RatePause
-- A 429 paused this process: every process of the run pauses as long, told
-- at once by NOTIFY, and by its row at their next heartbeat (RateSync),
-- which is what reaches them through PgBouncer in transaction mode.
WITH row AS (
    UPDATE crawl.rate_members SET paused_until = greatest(paused_until, now() + make_interval(secs => @pause_s::float8))
    WHERE run_id = @run_id AND owner = @owner
)
SELECT pg_notify('crawl_rate', @payload);

-- name: RateListen
LISTEN crawl_rate;

-- name: RateUnlisten
-- Before the listener's connection goes back to the pool.
UNLISTEN crawl_rate;
