-- Retention (package retention, crawler prune; docs/retention.md): which
-- runs a prune removes the bookkeeping of, and the batched deletes.
--
-- Every Prune* statement below serves both the real prune and --dry-run:
-- doomed picks the rows to remove (at most @lim, NULL: all of them); a dry
-- run (@dry_run) counts them and deletes nothing, a real one deletes them
-- by ctid (a TID scan, no second search) in its own short transaction and
-- counts what went. One predicate per table, so a dry run reports what the
-- prune would remove.

-- name: PruneCandidates
-- The runs a prune would remove the bookkeeping of (of job @job_name, or of
-- every job when ''), with whether an earlier prune already did: ended runs
-- (state not running) that every given rule lets go, ended at least
-- @older_than_us microseconds ago (0: no age rule) and not among the
-- @keep_runs latest runs of their job (0: no such rule). Never the job's
-- latest run, its latest ended run nor its latest done run (the next run
-- of the job continues or compares with them), nor a run a process works
-- on: a live lease, or a heartbeat (crawl.rate_members) in the last minute.
WITH latest AS (
    SELECT job_name, max(id) AS any_run,
           max(id) FILTER (WHERE state <> 'running') AS ended,
           max(id) FILTER (WHERE state = 'done') AS done
    FROM crawl.runs GROUP BY job_name
), ranked AS (
    SELECT id, row_number() OVER (PARTITION BY job_name ORDER BY id DESC) AS n FROM crawl.runs
)
SELECT r.id, r.job_name, r.pruned_at IS NOT NULL
FROM crawl.runs r JOIN latest l USING (job_name) JOIN ranked k USING (id)
WHERE r.state <> 'running'
  AND r.id <> l.any_run AND r.id IS DISTINCT FROM l.ended AND r.id IS DISTINCT FROM l.done
  AND (@keep_runs::int = 0 OR k.n > @keep_runs::int)
  AND (@older_than_us::bigint = 0
       OR coalesce(r.finished_at, r.started_at) < now() - @older_than_us::bigint * interval '1 microsecond')
  AND (@job_name::text = '' OR r.job_name = @job_name::text)
  AND NOT EXISTS (SELECT 1 FROM crawl.tasks t
                  WHERE t.run_id = r.id AND t.state = 'leased' AND t.lease_expires_at > now())
  AND NOT EXISTS (SELECT 1 FROM crawl.rate_members m
                  WHERE m.run_id = r.id AND m.heartbeat_at > now() - interval '1 minute')
ORDER BY r.id;

-- name: MarkPruned
-- Marks the runs @run_ids pruned, under the job's lock (LockJob), with the
-- credits their tasks saved (crawler runs keeps showing them). It re-checks
-- what PruneCandidates checked of the run itself: the UPDATE locks the row,
-- so a concurrent `crawler run --resume` (ResumeRun, which refuses a pruned
-- run) either marked it running first and it is left alone, or finds it
-- pruned.
UPDATE crawl.runs r SET pruned_at = now(),
    pruned_credits_saved = (SELECT coalesce(sum(t.credits_saved), 0) FROM crawl.tasks t WHERE t.run_id = r.id)
WHERE r.id = ANY(@run_ids::bigint[]) AND r.pruned_at IS NULL AND r.state <> 'running'
  AND NOT EXISTS (SELECT 1 FROM crawl.tasks t
                  WHERE t.run_id = r.id AND t.state = 'leased' AND t.lease_expires_at > now())
  AND NOT EXISTS (SELECT 1 FROM crawl.rate_members m
                  WHERE m.run_id = r.id AND m.heartbeat_at > now() - interval '1 minute')
RETURNING r.id;

-- name: PruneObserver
-- The first run after @run_id that a prune keeps (not pruned, not among
-- @run_ids), else the next run id to come: the earliest run that can still
-- read @run_id's tasks through reuse (PruneTasks).
SELECT coalesce(min(id), (SELECT coalesce(max(id), 0) + 1 FROM crawl.runs))
FROM crawl.runs WHERE id > @run_id AND pruned_at IS NULL AND id <> ALL(@run_ids::bigint[]);

-- name: PruneTasks
-- Run @run_id's tasks, but those reuse still reads (internal/db/queries/
-- reuse.sql), from after (@after_kind, @after_key) in key order (the page
-- of the next batch starts there, past the kept ones). Kept: a done task
--   * of a kind with a refresh_after rule (@fresh_kinds) when no done task
--     of its kind and key finished later: LastFetch finds the latest
--     successful fetch (never one of the asking run's own: its task of
--     that key is the one asking);
--   * of a stop_at_seen list (@walk_kinds), walked whole or cut short,
--     when no whole walk (to the list's end: neither cut by stop_at_seen
--     nor capped by its page limit) of the list by a run before @observer (the first
--     run kept after this one, PruneObserver) finished later: LastFullWalk
--     of any kept or future run (it reads the runs before its own) finds
--     the latest whole walk and counts the cut ones since.
-- Rows deleted are never rows these rules keep, so the kept set does not
-- move under the batches, and a second prune finds nothing.
WITH doomed AS (
    SELECT t.ctid, t.kind, t.key FROM crawl.tasks t
    WHERE t.run_id = @run_id AND (t.kind, t.key) > (@after_kind::text, @after_key::text)
      AND NOT (t.state = 'done' AND (
          (t.kind = ANY(@fresh_kinds::text[]) AND NOT EXISTS (
                      SELECT 1 FROM crawl.tasks u
                      WHERE u.kind = t.kind AND u.key = t.key AND u.state = 'done' AND u.finished_at > t.finished_at))
          OR (t.kind = ANY(@walk_kinds::text[]) AND t.outcome IS NOT NULL AND NOT EXISTS (
                      SELECT 1 FROM crawl.tasks u
                      WHERE u.kind = t.kind AND u.key = t.key AND u.state = 'done' AND u.finished_at > t.finished_at
                        AND u.outcome NOT IN ('done_stop_at_seen', 'done_page_limit') AND u.run_id < @observer))))
    ORDER BY t.kind, t.key
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.tasks WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END,
       coalesce(d.kind, ''), coalesce(d.key, '')
FROM (SELECT 1) one
LEFT JOIN (SELECT kind, key FROM doomed ORDER BY kind DESC, key DESC LIMIT 1) d ON true;

-- name: PrunePages
-- The page archive of the runs: crawler replay of a pruned run is no longer possible.
WITH doomed AS (
    SELECT s.ctid FROM crawl.pages s
    WHERE s.run_id = ANY(@run_ids::bigint[])
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.pages WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneSamples
-- The runs' progress samples but each run's latest, which crawler runs reads
-- the run's failed tasks from.
WITH doomed AS (
    SELECT s.ctid FROM crawl.run_samples s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM crawl.run_samples n WHERE n.run_id = s.run_id AND (n.at, n.id) > (s.at, s.id))
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.run_samples WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneRevisitPlan
-- The runs' adaptive schedules (their totals stay in crawl.runs.revisit).
WITH doomed AS (
    SELECT p.ctid FROM crawl.revisit_plan p WHERE p.run_id = ANY(@run_ids::bigint[])
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.revisit_plan WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneResponseKeys
-- The sampled shape of the runs' answers (status and report compare the
-- latest runs').
WITH doomed AS (
    SELECT s.ctid FROM crawl.response_keys s
    WHERE s.run_id = ANY(@run_ids::bigint[])
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.response_keys WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneRateMembers
-- The heartbeats of the processes that worked on the runs.
WITH doomed AS (
    SELECT s.ctid FROM crawl.rate_members s
    WHERE s.run_id = ANY(@run_ids::bigint[])
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.rate_members WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneRateQuota
-- The runs' shared quota estimates.
WITH doomed AS (
    SELECT s.ctid FROM crawl.rate_quota s
    WHERE s.run_id = ANY(@run_ids::bigint[])
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM crawl.rate_quota WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- With --snapshots: the per-run rows of the data tables (snapshots,
-- rankings, live status) of the runs, but the latest row of each entity
-- or search (no later run has one): the *_latest views and crawler report's
-- latest figures stay the same; growth between pruned runs goes.

-- name: PruneUserSnapshots
-- shortvideo.user_snapshots: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.user_snapshots s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.user_snapshots n WHERE n.unique_id = s.unique_id AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.user_snapshots WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneVideoSnapshots
-- shortvideo.video_snapshots: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.video_snapshots s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.video_snapshots n WHERE n.video_id = s.video_id AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.video_snapshots WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneHashtagSnapshots
-- shortvideo.hashtag_snapshots: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.hashtag_snapshots s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.hashtag_snapshots n WHERE n.name = s.name AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.hashtag_snapshots WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneSongSnapshots
-- shortvideo.song_snapshots: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.song_snapshots s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.song_snapshots n WHERE n.song_id = s.song_id AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.song_snapshots WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneLiveStatus
-- shortvideo.live_status: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.live_status s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.live_status n WHERE n.unique_id = s.unique_id AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.live_status WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneSearchResults
-- shortvideo.search_results: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.search_results s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.search_results n WHERE n.search_kind = s.search_kind AND n.query_key = s.query_key AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.search_results WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneFeedEntries
-- shortvideo.feed_entries: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.feed_entries s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.feed_entries n WHERE n.feed = s.feed AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.feed_entries WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PrunePopularCreators
-- shortvideo.popular_creators: rows of the runs that a later run's row of the same list supersedes.
WITH doomed AS (
    SELECT s.ctid FROM shortvideo.popular_creators s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM shortvideo.popular_creators n WHERE true AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM shortvideo.popular_creators WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneProfileSnapshots
-- photosocial.profile_snapshots: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM photosocial.profile_snapshots s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM photosocial.profile_snapshots n WHERE n.username = s.username AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM photosocial.profile_snapshots WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneReelSnapshots
-- photosocial.reel_snapshots: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM photosocial.reel_snapshots s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM photosocial.reel_snapshots n WHERE n.reel_id = s.reel_id AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM photosocial.reel_snapshots WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneReelSearchResults
-- photosocial.reel_search_results: rows of the runs that a later run's row of the same key supersedes.
WITH doomed AS (
    SELECT s.ctid FROM photosocial.reel_search_results s
    WHERE s.run_id = ANY(@run_ids::bigint[])
      AND EXISTS (SELECT 1 FROM photosocial.reel_search_results n WHERE n.query_key = s.query_key AND n.run_id > s.run_id)
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM photosocial.reel_search_results WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;
