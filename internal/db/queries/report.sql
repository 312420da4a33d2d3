-- The run report (package internal/report): `crawler report`.

-- name: ReportRun
-- The run's figures and the previous run of the same job (NULL: none).
-- Credits charged or not: what dead processes hold (crawl.run_ledger's
-- credits_unknown).
SELECT r.id, r.job_name, r.state, coalesce(r.stop_reason, ''), r.started_at, r.finished_at,
       r.credits_billed, r.max_credits,
       (SELECT coalesce(sum(h.held), 0) FROM crawl.credit_holds h
        WHERE h.run_id = r.id AND h.beat_at < now() - interval '15 seconds')::bigint,
       coalesce((SELECT sum(pages) FROM crawl.tasks t WHERE t.run_id = r.id), 0)::bigint,
       coalesce((SELECT sum(rows_written) FROM crawl.run_processes p WHERE p.run_id = r.id), 0)::bigint,
       (SELECT max(id) FROM crawl.runs q WHERE q.job_name = r.job_name AND q.id < r.id)
FROM crawl.runs r
WHERE r.id = coalesce(@run_id::bigint, (SELECT max(id) FROM crawl.runs));

-- name: ReportCredits
-- Requests and credits by endpoint.
SELECT endpoint, requests, billed, free, rate_limited, errors, credits_remaining
FROM crawl.credit_usage WHERE run_id = @run_id
ORDER BY billed DESC, endpoint;

-- name: ReportSamples
-- The run's progress samples in time order, with their process's start,
-- as seconds since the run started, and their figures of the limit of
-- requests in flight (NULL before migration 00052).
SELECT s.owner, extract(epoch FROM s.at - r.started_at)::float8,
       extract(epoch FROM coalesce(p.started_at, r.started_at) - r.started_at)::float8,
       s.pages, s.rate_limited, s.in_flight, s.concurrency_limit::bigint, s.concurrency_moves
FROM crawl.run_samples s
JOIN crawl.runs r ON r.id = s.run_id
LEFT JOIN crawl.run_processes p ON p.run_id = s.run_id AND p.owner = s.owner
WHERE s.run_id = @run_id
ORDER BY s.at, s.id;

-- name: ReportTaskKinds
-- Tasks by kind and state.
SELECT kind,
       count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'failed'),
       count(*) FILTER (WHERE state = 'skipped'), count(*) FILTER (WHERE state IN ('pending', 'leased'))
FROM crawl.tasks WHERE run_id = @run_id
GROUP BY kind ORDER BY kind;

-- name: ReportTables
-- The data tables and how they name runs: a run_id column (snapshots,
-- rankings) or first_seen_run / last_seen_run (entities), those the
-- user may read. From the catalog: information_schema's views (the same
-- tables, as BASE TABLE) cost ~60 ms.
SELECT n.nspname || '.' || c.relname,
       bool_or(a.attname = 'run_id'), bool_or(a.attname = 'first_seen_run')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname IN ('shortvideo', 'photosocial') AND c.relkind IN ('r', 'p') AND has_table_privilege(c.oid, 'SELECT')
GROUP BY 1 ORDER BY 1;

-- name: ReportFollowerMovers
-- Accounts by follower growth between the previous run and this one.
SELECT unique_id, prev_follower_count, follower_count, follower_count_delta
FROM shortvideo.user_growth
WHERE run_id = @run_id AND prev_run_id = @prev_run_id AND follower_count_delta IS NOT NULL
ORDER BY follower_count_delta DESC, unique_id LIMIT @lim;

-- name: ReportPlayMovers
-- Videos by play-count growth between the previous run and this one.
SELECT video_id, prev_play_count, play_count, play_count_delta
FROM shortvideo.video_growth
WHERE run_id = @run_id AND prev_run_id = @prev_run_id AND play_count_delta IS NOT NULL
ORDER BY play_count_delta DESC, video_id LIMIT @lim;

-- name: ReportFollowerFalls
-- Accounts by follower loss between the previous run and this one.
SELECT unique_id, prev_follower_count, follower_count, follower_count_delta
FROM shortvideo.user_growth
WHERE run_id = @run_id AND prev_run_id = @prev_run_id AND follower_count_delta < 0
ORDER BY follower_count_delta, unique_id LIMIT @lim;

-- name: ReportFollowerMoves
-- How many accounts' follower counts rose, fell or stayed between the
-- previous run and this one.
SELECT count(*) FILTER (WHERE follower_count_delta > 0), count(*) FILTER (WHERE follower_count_delta < 0),
       count(*) FILTER (WHERE follower_count_delta = 0)
FROM shortvideo.user_growth
WHERE run_id = @run_id AND prev_run_id = @prev_run_id;

-- name: ReportNewAccounts
-- Accounts the run saw first (the most followed first, by the run's
-- snapshot), and how many there are. first_seen_run <= last_seen_run: they
-- are among the accounts last seen by the run or a later one, read
-- through users_last_seen_run_idx, not the whole table.
SELECT u.unique_id, s.follower_count, count(*) OVER ()
FROM shortvideo.users u
LEFT JOIN shortvideo.user_snapshots s ON s.unique_id = u.unique_id AND s.run_id = u.first_seen_run
WHERE u.first_seen_run = @run_id AND u.last_seen_run >= @run_id
ORDER BY s.follower_count DESC NULLS LAST, u.unique_id LIMIT @lim;

-- name: ReportFollowLists
-- The follow lists the run walked (shortvideo.follow_walks' rows of the
-- run): complete or why not (pending and leased are unfinished;
-- stop_at_seen without its detail), and for a complete walk after an
-- earlier complete one, that walk's run, the counter at both and the edges
-- gained and lost between them, by the rule of shortvideo.follow_changes.
-- Every read is an index probe bounded by the run: its walks through
-- tasks_run_id_kind_key_key, each walk's list's previous complete walk
-- (tasks_complete_walks_idx, one probe however many incomplete walks came
-- between), the two snapshots by key (scalar subqueries: a probe each,
-- whatever the estimates) and the list's edges by index: nothing of other
-- lists or older runs. Read through the view, its join of the snapshots
-- and the tasks' outcome were planned as hash joins over every run's
-- snapshots and tasks when the run's walks were estimated many (the plan
-- of a run whose tasks ANALYZE has not seen yet, or of a generic plan).
SELECT w.unique_id, w.list, w.complete,
       CASE WHEN w.state IN ('pending', 'leased') THEN 'unfinished'
            WHEN w.state <> 'done' THEN w.state
            WHEN w.outcome = 'done_stop_at_seen' THEN 'stop_at_seen'
            ELSE coalesce(w.reason, '') END,
       w.entries_stored,
       (SELECT CASE w.list WHEN 'followers' THEN s.follower_count ELSE s.following_count END
        FROM shortvideo.user_snapshots s WHERE s.unique_id = w.unique_id AND s.run_id = w.run_id),
       p.run_id,
       (SELECT CASE w.list WHEN 'followers' THEN ps.follower_count ELSE ps.following_count END
        FROM shortvideo.user_snapshots ps WHERE ps.unique_id = w.unique_id AND ps.run_id = p.run_id),
       coalesce(c.gained, 0), coalesce(c.lost, 0)
FROM (
    -- follow_walks' columns, from the run's tasks alone.
    SELECT t.run_id, t.params->>'handle' AS unique_id,
           CASE t.kind WHEN 'shortvideo.followers' THEN 'followers' ELSE 'following' END AS list,
           t.kind, t.state, t.outcome, t.reason, t.state = 'done' AND t.outcome = 'done_end' AS complete,
           t.items - t.dropped AS entries_stored
    FROM crawl.tasks t
    WHERE t.run_id = @run_id AND t.kind IN ('shortvideo.followers', 'shortvideo.following')) w
LEFT JOIN LATERAL (
    -- follow_walks.complete, spelled as the index's predicate.
    SELECT p.run_id FROM crawl.tasks p
    WHERE p.params->>'handle' = w.unique_id AND p.kind = w.kind AND p.run_id < w.run_id
      AND p.kind IN ('shortvideo.followers', 'shortvideo.following') AND p.state = 'done' AND p.outcome = 'done_end'
    ORDER BY p.run_id DESC LIMIT 1) p ON w.complete
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE f.first_seen_run > p.run_id) AS gained, count(*) FILTER (WHERE f.first_seen_run <= p.run_id) AS lost
    FROM (SELECT first_seen_run, last_seen_run FROM shortvideo.follows WHERE w.list = 'followers' AND followee = w.unique_id
          UNION ALL
          SELECT first_seen_run, last_seen_run FROM shortvideo.follows WHERE w.list = 'following' AND follower = w.unique_id) f
    WHERE (f.first_seen_run > p.run_id AND f.first_seen_run <= w.run_id AND f.last_seen_run >= w.run_id)
       OR (f.first_seen_run <= p.run_id AND f.last_seen_run >= p.run_id AND f.last_seen_run < w.run_id)) c ON p.run_id IS NOT NULL
ORDER BY coalesce(c.gained, 0) + coalesce(c.lost, 0) DESC, w.unique_id, w.list;

-- name: ReportNoJIT
-- First in the report's read-only transaction. Its statements read the
-- run's rows through indexes, but ReportFollowLists is costed per walk of
-- the run (~100 each): past ~1,000 walks it passes jit_above_cost, past
-- ~5,000 the inlining and optimizing thresholds. Compiling took ~50 ms at
-- 2,000 walks for a statement that runs in ~50 ms, and 0.8 s once the
-- plan was inlined and optimized.
SET LOCAL jit = off;
