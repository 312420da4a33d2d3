-- Retention (package retention, crawler prune; docs/retention.md): which
-- runs a prune removes the bookkeeping of, and the batched deletes.
--
-- Every Prune* statement serves both the real prune and --dry-run: doomed
-- picks the rows to remove (at most @lim, NULL: all of them); a real prune
-- deletes them by ctid (a TID scan, no second search), each statement in
-- its own short transaction, and counts what went; a dry run (@dry_run)
-- counts them and deletes nothing, in one transaction (its marks rolled
-- back). One predicate per table, so a dry run reports what the prune
-- would remove.
--
-- Incremental: a prune reads the rows of the runs it prunes (those it
-- marks, and those an interrupted prune left unfinished), and of the runs
-- pruned before (@earlier) only the rows it keeps of the same keys, found
-- through the pruned runs' rows, never by run: its work follows what it
-- removes, not the history.

-- name: PruneSession
-- Settings for the prune's statements, in the transaction of each (never
-- on the session: through PgBouncer in transaction pooling they would stay
-- on a server connection other clients get), or in the dry run's
-- transaction. JIT off: PruneTasks is costed past
-- jit_above_cost, and compiling took ~60 ms a batch for a statement that
-- runs in ~100. Custom plans: the generic plan PostgreSQL settles on
-- after five runs of a statement cannot see that @earlier is empty or
-- short and took the prune of a year's history from ~7 s to ~12.
SELECT set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true);

-- name: PruneCandidates
-- The runs a prune would remove the bookkeeping of (of job @job_name, or of
-- every job when ''), with whether an earlier prune marked them pruned:
-- ended runs (state not running) that every given rule lets go,
-- ended at least @older_than_us microseconds ago (0: no age rule) and not
-- among the @keep_runs latest runs of their job (0: no such rule). Never
-- the job's latest run, its latest ended run nor its latest done run (the
-- next run of the job continues or compares with them), nor a run a
-- process works on: a live lease, or a heartbeat (crawl.rate_members) in
-- the last minute (a marked run cannot be worked on again: not looked for).
-- One row per run of crawl.runs: no task of a run is read, but a run not
-- marked yet's leases.
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
  AND (r.pruned_at IS NOT NULL OR (
       NOT EXISTS (SELECT 1 FROM crawl.tasks t
                   WHERE t.run_id = r.id AND t.state = 'leased' AND t.lease_expires_at > now())
       AND NOT EXISTS (SELECT 1 FROM crawl.rate_members m
                       WHERE m.run_id = r.id AND m.heartbeat_at > now() - interval '1 minute')))
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

-- name: PruneRuns
-- Every run, with whether it is marked pruned and which of its rows
-- earlier prunes finished removing: the observers of PruneTasks and the
-- @earlier runs of the statements. One row per run.
SELECT id, pruned_at IS NOT NULL, prune_finished_at IS NOT NULL, snapshots_pruned_at IS NOT NULL
FROM crawl.runs ORDER BY id;

-- name: MarkPruneFinished
-- The runs @run_ids have had their bookkeeping removed: no prune reads
-- their rows again (but the tasks kept, through their keys).
UPDATE crawl.runs SET prune_finished_at = now() WHERE id = ANY(@run_ids::bigint[]) AND prune_finished_at IS NULL;

-- name: MarkSnapshotsPruned
-- The runs @run_ids have had their snapshot rows removed (--snapshots).
UPDATE crawl.runs SET snapshots_pruned_at = now() WHERE id = ANY(@run_ids::bigint[]) AND snapshots_pruned_at IS NULL;

-- name: PruneTasks
-- Of run @run_id, the next @lim tasks in key order after (@after_kind,
-- @after_key): those reuse (internal/db/queries/reuse.sql) does not read
-- go; and, for each of them that reuse could read, the tasks of the same
-- kind and key that earlier prunes kept (runs @earlier) and that finished
-- before it, examined again, once a prune: by the first of the runs it
-- prunes (@work, in order) with such a task. Reuse reads of a done task:
--   * of a kind with a refresh_after rule (@fresh_kinds): LastFetch finds
--     the latest successful fetch of a kind and key (never one of the
--     asking run's own: its task of that key is the one asking): kept when
--     no done task of its kind and key finished later;
--   * of a stop_at_seen list (@walk_kinds): LastFullWalk of any kept or
--     future run (it reads the runs before its own) finds the latest whole
--     walk (neither cut by stop_at_seen nor capped by its page limit) and
--     counts the walks stop_at_seen cut since; adaptive revisits ask it
--     whether the list was ever walked whole. Of a task's run, O is its
--     observer (@obs_run, @obs_of: the first run after it that no prune
--     takes, or the next run to come): a whole walk is kept when no whole
--     walk by a run before O finished later; a cut one too, when a whole
--     walk finished before it (without one, no run counts it). A capped
--     walk is never read: it goes.
-- A task deleted is never one these rules keep, and deleting it never
-- makes another one needed: the kept set does not move under the batches.
-- Returns the tasks deleted, the tasks of @run_id read, and the key of the
-- last (the next page starts after it).
WITH obs AS (
    SELECT * FROM unnest(@obs_run::bigint[], @obs_of::bigint[]) AS o(run_id, observer)
), page AS (
    SELECT t.ctid, t.run_id, t.kind, t.key, t.state, t.outcome, t.finished_at FROM crawl.tasks t
    WHERE t.run_id = @run_id AND (t.kind, t.key) > (@after_kind::text, @after_key::text)
    ORDER BY t.kind, t.key
    LIMIT @lim::bigint
), found AS MATERIALIZED (
    -- Materialized: the test below runs for the few tasks found, not for
    -- every task of the page.
    SELECT e.ctid, e.run_id, e.kind, e.key, e.state, e.outcome, e.finished_at
    FROM page p
    JOIN crawl.tasks e ON e.kind = p.kind AND e.key = p.key AND e.state = 'done' AND e.finished_at < p.finished_at
    WHERE p.state = 'done' AND (p.kind = ANY(@fresh_kinds::text[]) OR p.kind = ANY(@walk_kinds::text[]))
      AND e.run_id = ANY(@earlier::bigint[])
), earlier AS (
    SELECT f.* FROM found f
    WHERE NOT EXISTS (SELECT 1 FROM unnest(@work::bigint[]) w(run_id)
                      JOIN crawl.tasks q ON q.run_id = w.run_id AND q.kind = f.kind AND q.key = f.key AND q.state = 'done'
                      WHERE w.run_id < @run_id)
), doomed AS (
    SELECT c.ctid FROM (SELECT * FROM page UNION ALL SELECT * FROM earlier) c JOIN obs USING (run_id)
    WHERE NOT (c.state = 'done' AND (
        (c.kind = ANY(@fresh_kinds::text[]) AND NOT EXISTS (
            SELECT 1 FROM crawl.tasks u
            WHERE u.kind = c.kind AND u.key = c.key AND u.state = 'done' AND u.finished_at > c.finished_at))
        OR (c.kind = ANY(@walk_kinds::text[]) AND c.outcome NOT IN ('done_page_limit', 'done_window')
            AND NOT EXISTS (
                SELECT 1 FROM crawl.tasks u
                WHERE u.kind = c.kind AND u.key = c.key AND u.state = 'done' AND u.finished_at > c.finished_at
                  AND u.outcome NOT IN ('done_stop_at_seen', 'done_page_limit', 'done_window') AND u.run_id < obs.observer)
            AND (c.outcome <> 'done_stop_at_seen' OR EXISTS (
                SELECT 1 FROM crawl.tasks f
                WHERE f.kind = c.kind AND f.key = c.key AND f.state = 'done' AND f.finished_at < c.finished_at
                  AND f.outcome NOT IN ('done_stop_at_seen', 'done_page_limit', 'done_window'))))))
), gone AS (
    DELETE FROM crawl.tasks WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END,
       (SELECT count(*) FROM page),
       coalesce((SELECT kind FROM page ORDER BY kind DESC, key DESC LIMIT 1), ''),
       coalesce((SELECT key FROM page ORDER BY kind DESC, key DESC LIMIT 1), '');


-- template: PruneRunRows
-- The rows of table .table of the runs @run_ids.
WITH doomed AS (
    SELECT s.ctid FROM {{.table}} s
    WHERE s.run_id = ANY(@run_ids::bigint[])
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM {{.table}} WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PrunePages
-- The page archive of the runs: crawler replay of a pruned run is no longer possible.
-- from: PruneRunRows table=crawl.pages

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
-- from: PruneRunRows table=crawl.revisit_plan

-- name: PruneResponseKeys
-- The sampled shape of the runs' answers (status and report compare the
-- latest runs').
-- from: PruneRunRows table=crawl.response_keys

-- name: PruneRateMembers
-- The heartbeats of the processes that worked on the runs.
-- from: PruneRunRows table=crawl.rate_members

-- name: PruneRateQuota
-- The runs' shared quota estimates.
-- from: PruneRunRows table=crawl.rate_quota

-- With --snapshots: the per-run rows of the data tables (snapshots,
-- rankings, live status) of run @run_id, and the rows earlier prunes kept
-- (runs @earlier) of the same keys (examined once a prune: by the first of
-- the runs it prunes, @work in order, with a row of the key), that a later
-- row of the same key supersedes, but for a live run: a row n later than s
-- supersedes it only when no running run lies after s up to n, so the row
-- a running run compares its own with (its key's latest before it: its
-- profiles' counters, the report's moves) stays. Each key's latest row
-- stays: the *_latest views and crawler report's latest figures read the
-- same; growth between pruned runs goes. Each batch reads the run's rows
-- and, by their keys, the earlier runs' rows of the same keys.

-- template: PruneSnapshotRows
-- Table .table, keyed by the columns .key (none: one list a run): rows of
-- run @run_id and, of its keys, of runs @earlier that a later row
-- supersedes.
WITH live AS (
    SELECT coalesce(array_agg(id), '{}') AS ids FROM crawl.runs WHERE state = 'running'
), doomed AS (
    SELECT DISTINCT s.ctid FROM {{.table}} p
    JOIN {{.table}} s ON {{range list .key}}s.{{.}} = p.{{.}} AND {{end}}(s.run_id = p.run_id OR (s.run_id = ANY(@earlier::bigint[]) AND NOT EXISTS (
        SELECT 1 FROM unnest(@work::bigint[]) w(run_id) JOIN {{.table}} q ON q.run_id = w.run_id{{range list .key}} AND q.{{.}} = p.{{.}}{{end}} WHERE w.run_id < @run_id)))
    CROSS JOIN live
    WHERE p.run_id = @run_id AND EXISTS (
        SELECT 1 FROM {{.table}} n
        WHERE {{range list .key}}n.{{.}} = s.{{.}} AND {{end}}n.run_id > s.run_id
          AND NOT EXISTS (SELECT 1 FROM unnest(live.ids) l WHERE l > s.run_id AND l <= n.run_id))
    LIMIT @lim::bigint
), gone AS (
    DELETE FROM {{.table}} WHERE NOT @dry_run::boolean AND ctid = ANY(ARRAY(SELECT ctid FROM doomed))
    RETURNING 1
)
SELECT CASE WHEN @dry_run::boolean THEN (SELECT count(*) FROM doomed) ELSE (SELECT count(*) FROM gone) END;

-- name: PruneUserSnapshots
-- from: PruneSnapshotRows table=shortvideo.user_snapshots key=unique_id

-- name: PruneVideoSnapshots
-- from: PruneSnapshotRows table=shortvideo.video_snapshots key=video_id

-- name: PruneHashtagSnapshots
-- from: PruneSnapshotRows table=shortvideo.hashtag_snapshots key=name

-- name: PruneSongSnapshots
-- from: PruneSnapshotRows table=shortvideo.song_snapshots key=song_id

-- name: PruneLiveStatus
-- from: PruneSnapshotRows table=shortvideo.live_status key=unique_id

-- name: PruneSearchResults
-- from: PruneSnapshotRows table=shortvideo.search_results key=search_kind,query_key

-- name: PruneFeedEntries
-- from: PruneSnapshotRows table=shortvideo.feed_entries key=feed

-- name: PrunePopularCreators
-- from: PruneSnapshotRows table=shortvideo.popular_creators key=

-- name: PruneProfileSnapshots
-- from: PruneSnapshotRows table=photosocial.profile_snapshots key=username

-- name: PruneReelSnapshots
-- from: PruneSnapshotRows table=photosocial.reel_snapshots key=reel_id

-- name: PruneReelSearchResults
-- from: PruneSnapshotRows table=photosocial.reel_search_results key=query_key
