-- Change in the follow graph, for analysts (docs/graph-change.md): who
-- started and who stopped following an account between two complete walks
-- of its list, how complete each walk was next to the counter its profile
-- reported, and the counters over time beside the entries the walks saw.
--
-- A walk is one crawl.tasks row of kind shortvideo.followers or
-- shortvideo.following: the list of the account params->>'handle' (the
-- owner's shortvideo.users key) in one run. It is COMPLETE when the task
-- ended done having reached the list's real end: reason 'end' (the
-- upstream said hasMore false, or sent no cursor to follow) or 'empty_page'
-- (an empty page on a list that does not say hasMore). A page limit
-- ('page_limit'), stop_at_seen ('stop_at_seen: ...'), a repeated cursor
-- ('repeated_cursor'), an empty page still claiming more
-- ('empty_page_more'), a failed, skipped, pending or leased task are not
-- complete (sources.NextStep names the reasons).
--
-- Membership: shortvideo.follows keeps only the first and the latest run
-- that saw an edge (any list of that run), not one row per walk. Between
-- two complete walks A < B of a list (no complete walk in between):
--   started = first_seen_run in (A, B] and last_seen_run >= B
--   stopped = first_seen_run <= A and last_seen_run in [A, B)
-- last_seen_run < B proves the edge absent from B (a complete walk writes
-- every entry it gets) and first_seen_run > A proves it absent from A. The
-- other side is inferred from the interval [first_seen_run, last_seen_run]:
-- an edge seen before and after a run is taken as present in it. So an
-- account that unfollows and follows again shows only its first start and
-- (when it stays away) its last stop; the gap in between is not recorded.

-- +goose Up

-- The walks of one account's lists (follow_walks filtered by unique_id,
-- the previous complete walk of a list).
CREATE INDEX tasks_follow_lists_idx ON crawl.tasks ((params->>'handle'), kind, run_id)
    WHERE kind IN ('shortvideo.followers', 'shortvideo.following');
COMMENT ON INDEX crawl.tasks_follow_lists_idx IS 'The follow-list walks of an account by run (views shortvideo.follow_walks, follow_changes, follow_count_history).';

CREATE VIEW shortvideo.follow_walks AS
SELECT t.run_id, t.params->>'handle' AS unique_id,
       CASE t.kind WHEN 'shortvideo.followers' THEN 'followers' ELSE 'following' END AS list,
       t.kind, t.id AS task_id, t.key AS list_key, t.state, t.reason,
       (t.state = 'done' AND t.reason IN ('end', 'empty_page')) AS complete,
       t.pages, t.max_pages, t.items AS entries_received, t.dropped AS entries_dropped,
       t.items - t.dropped AS entries_stored,
       c.reported_count,
       round((t.items - t.dropped)::numeric / nullif(c.reported_count, 0), 4) AS coverage,
       t.finished_at
FROM crawl.tasks t
LEFT JOIN shortvideo.user_snapshots s ON s.unique_id = t.params->>'handle' AND s.run_id = t.run_id
CROSS JOIN LATERAL (
    SELECT CASE t.kind WHEN 'shortvideo.followers' THEN s.follower_count ELSE s.following_count END AS reported_count) c
WHERE t.kind IN ('shortvideo.followers', 'shortvideo.following');
COMMENT ON VIEW shortvideo.follow_walks IS 'One row per walk of a follow list (a crawl.tasks row of kind shortvideo.followers or shortvideo.following): whether it reached the list''s end (complete), the entries it stored, and the counter the account''s profile reported in the same run, with their ratio.';
COMMENT ON COLUMN shortvideo.follow_walks.run_id IS 'The run of the walk.';
COMMENT ON COLUMN shortvideo.follow_walks.unique_id IS 'The account whose list it is (crawl.tasks.params->>''handle''; shortvideo.users.unique_id, secuid:<secUid> for an account known only by its secUid).';
COMMENT ON COLUMN shortvideo.follow_walks.list IS 'followers (accounts that follow unique_id) or following (accounts unique_id follows).';
COMMENT ON COLUMN shortvideo.follow_walks.kind IS 'The task kind: shortvideo.followers or shortvideo.following.';
COMMENT ON COLUMN shortvideo.follow_walks.task_id IS 'The task (crawl.tasks.id).';
COMMENT ON COLUMN shortvideo.follow_walks.list_key IS 'What the list was addressed by upstream (crawl.tasks.key): secUid, handle or user id, per dialect.';
COMMENT ON COLUMN shortvideo.follow_walks.state IS 'The task''s state: pending, leased, done, failed or skipped.';
COMMENT ON COLUMN shortvideo.follow_walks.reason IS 'Why the walk ended: end, empty_page, page_limit, stop_at_seen: ..., repeated_cursor, empty_page_more, or the error of a failed or skipped task; NULL while it runs.';
COMMENT ON COLUMN shortvideo.follow_walks.complete IS 'True when the walk reached the list''s real end: state done and reason end or empty_page. A page limit, stop_at_seen, a repeated cursor, an empty page claiming more, or a task not done is not complete.';
COMMENT ON COLUMN shortvideo.follow_walks.pages IS 'Pages the walk committed.';
COMMENT ON COLUMN shortvideo.follow_walks.max_pages IS 'The walk''s page limit; 0: none.';
COMMENT ON COLUMN shortvideo.follow_walks.entries_received IS 'List entries the upstream sent over the committed pages, dropped ones included (crawl.tasks.items).';
COMMENT ON COLUMN shortvideo.follow_walks.entries_dropped IS 'Entries received but not stored (crawl.tasks.dropped: null, no uniqueId, a key over the cap).';
COMMENT ON COLUMN shortvideo.follow_walks.entries_stored IS 'Entries stored as follow edges: entries_received - entries_dropped. An entry the upstream repeated on two pages counts twice.';
COMMENT ON COLUMN shortvideo.follow_walks.reported_count IS 'The counter the account''s profile reported in the same run: follower_count for followers, following_count for following (shortvideo.user_snapshots); NULL when the run took no snapshot of the account.';
COMMENT ON COLUMN shortvideo.follow_walks.coverage IS 'entries_stored / reported_count, 4 decimals: 1 when the walk stored as many entries as the profile counts; NULL when reported_count is NULL or 0.';
COMMENT ON COLUMN shortvideo.follow_walks.finished_at IS 'When the walk ended (crawl.tasks.finished_at); NULL while it runs.';

CREATE VIEW shortvideo.follow_changes AS
SELECT c.unique_id, c.list, c.prev_run_id, c.run_id, c.latest,
       e.change, e.account, e.follower, e.followee, e.first_seen_run, e.last_seen_run
FROM (
    SELECT w.unique_id, w.list, w.run_id, p.run_id AS prev_run_id,
           NOT EXISTS (SELECT 1 FROM shortvideo.follow_walks n
                       WHERE n.unique_id = w.unique_id AND n.kind = w.kind AND n.complete AND n.run_id > w.run_id) AS latest
    FROM shortvideo.follow_walks w
    JOIN LATERAL (
        SELECT p.run_id FROM shortvideo.follow_walks p
        WHERE p.unique_id = w.unique_id AND p.kind = w.kind AND p.complete AND p.run_id < w.run_id
        ORDER BY p.run_id DESC LIMIT 1) p ON true
    WHERE w.complete
    GROUP BY w.unique_id, w.list, w.kind, w.run_id, p.run_id
) c
CROSS JOIN LATERAL (
    SELECT CASE WHEN f.first_seen_run > c.prev_run_id THEN 'started' ELSE 'stopped' END AS change,
           f.follower AS account, f.follower, f.followee, f.first_seen_run, f.last_seen_run
    FROM shortvideo.follows f
    WHERE c.list = 'followers' AND f.followee = c.unique_id
      AND ((f.first_seen_run > c.prev_run_id AND f.first_seen_run <= c.run_id AND f.last_seen_run >= c.run_id)
        OR (f.first_seen_run <= c.prev_run_id AND f.last_seen_run >= c.prev_run_id AND f.last_seen_run < c.run_id))
    UNION ALL
    SELECT CASE WHEN f.first_seen_run > c.prev_run_id THEN 'started' ELSE 'stopped' END,
           f.followee, f.follower, f.followee, f.first_seen_run, f.last_seen_run
    FROM shortvideo.follows f
    WHERE c.list = 'following' AND f.follower = c.unique_id
      AND ((f.first_seen_run > c.prev_run_id AND f.first_seen_run <= c.run_id AND f.last_seen_run >= c.run_id)
        OR (f.first_seen_run <= c.prev_run_id AND f.last_seen_run >= c.prev_run_id AND f.last_seen_run < c.run_id))
) e;
COMMENT ON VIEW shortvideo.follow_changes IS 'Who started and who stopped following, per list and pair of consecutive complete walks (prev_run_id, run_id): started = in the later walk, not in the earlier (first_seen_run in (prev_run_id, run_id], last_seen_run >= run_id); stopped = in the earlier, not in the later (first_seen_run <= prev_run_id, last_seen_run in [prev_run_id, run_id)). latest marks the list''s last two complete walks. An unfollow followed by a new follow is not recorded (docs/graph-change.md).';
COMMENT ON COLUMN shortvideo.follow_changes.unique_id IS 'The account whose list changed (shortvideo.users.unique_id).';
COMMENT ON COLUMN shortvideo.follow_changes.list IS 'followers: account started or stopped following unique_id; following: unique_id started or stopped following account.';
COMMENT ON COLUMN shortvideo.follow_changes.prev_run_id IS 'The run of the earlier complete walk: the latest complete walk of the list before run_id.';
COMMENT ON COLUMN shortvideo.follow_changes.run_id IS 'The run of the later complete walk.';
COMMENT ON COLUMN shortvideo.follow_changes.latest IS 'True when run_id is the list''s latest complete walk (the pair is its last two complete walks).';
COMMENT ON COLUMN shortvideo.follow_changes.change IS 'started (the edge is in the walk of run_id, not in that of prev_run_id) or stopped (in prev_run_id''s, not in run_id''s).';
COMMENT ON COLUMN shortvideo.follow_changes.account IS 'The other end of the edge: the follower in a followers list, the account followed in a following list.';
COMMENT ON COLUMN shortvideo.follow_changes.follower IS 'The account that follows (or followed) (shortvideo.follows.follower).';
COMMENT ON COLUMN shortvideo.follow_changes.followee IS 'The account followed (shortvideo.follows.followee).';
COMMENT ON COLUMN shortvideo.follow_changes.first_seen_run IS 'First run that saw the edge (shortvideo.follows.first_seen_run).';
COMMENT ON COLUMN shortvideo.follow_changes.last_seen_run IS 'Latest run that saw the edge (shortvideo.follows.last_seen_run).';

CREATE VIEW shortvideo.follow_count_history AS
SELECT k.unique_id, k.run_id, r.started_at AS run_started_at, s.captured_at,
       s.follower_count, fw.entries_stored AS followers_seen, fw.complete AS followers_walk_complete,
       fw.reason AS followers_walk_reason,
       s.following_count, gw.entries_stored AS following_seen, gw.complete AS following_walk_complete,
       gw.reason AS following_walk_reason
FROM (SELECT unique_id, run_id FROM shortvideo.user_snapshots
      UNION
      SELECT params->>'handle', run_id FROM crawl.tasks
      WHERE kind IN ('shortvideo.followers', 'shortvideo.following')) k
LEFT JOIN crawl.runs r ON r.id = k.run_id
LEFT JOIN shortvideo.user_snapshots s ON s.unique_id = k.unique_id AND s.run_id = k.run_id
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.follow_walks w
    WHERE w.unique_id = k.unique_id AND w.run_id = k.run_id AND w.kind = 'shortvideo.followers'
    ORDER BY w.complete DESC, w.entries_stored DESC, w.task_id LIMIT 1) fw ON true
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.follow_walks w
    WHERE w.unique_id = k.unique_id AND w.run_id = k.run_id AND w.kind = 'shortvideo.following'
    ORDER BY w.complete DESC, w.entries_stored DESC, w.task_id LIMIT 1) gw ON true;
COMMENT ON VIEW shortvideo.follow_count_history IS 'An account''s follower and following counts per run (its profile snapshot) beside the entries that run''s walk of each list stored: one row per account and run that took a snapshot of it or walked one of its lists.';
COMMENT ON COLUMN shortvideo.follow_count_history.unique_id IS 'The account (shortvideo.users.unique_id).';
COMMENT ON COLUMN shortvideo.follow_count_history.run_id IS 'The run.';
COMMENT ON COLUMN shortvideo.follow_count_history.run_started_at IS 'When the run started (crawl.runs.started_at).';
COMMENT ON COLUMN shortvideo.follow_count_history.captured_at IS 'When the run''s snapshot of the account was written; NULL when the run took none (e.g. the profile was fresh under refresh_after).';
COMMENT ON COLUMN shortvideo.follow_count_history.follower_count IS 'Followers as the profile reported them in the run (shortvideo.user_snapshots.follower_count); NULL without a snapshot.';
COMMENT ON COLUMN shortvideo.follow_count_history.followers_seen IS 'Entries the run''s walk of the followers list stored (follow_walks.entries_stored); NULL when the run did not walk it.';
COMMENT ON COLUMN shortvideo.follow_count_history.followers_walk_complete IS 'Whether that walk reached the list''s end (follow_walks.complete); when false, followers_seen is a part of the list.';
COMMENT ON COLUMN shortvideo.follow_count_history.followers_walk_reason IS 'Why that walk ended (crawl.tasks.reason).';
COMMENT ON COLUMN shortvideo.follow_count_history.following_count IS 'Accounts followed as the profile reported them in the run (shortvideo.user_snapshots.following_count); NULL without a snapshot.';
COMMENT ON COLUMN shortvideo.follow_count_history.following_seen IS 'Entries the run''s walk of the following list stored; NULL when the run did not walk it.';
COMMENT ON COLUMN shortvideo.follow_count_history.following_walk_complete IS 'Whether that walk reached the list''s end.';
COMMENT ON COLUMN shortvideo.follow_count_history.following_walk_reason IS 'Why that walk ended (crawl.tasks.reason).';

-- +goose Down
DROP VIEW shortvideo.follow_count_history, shortvideo.follow_changes, shortvideo.follow_walks;
DROP INDEX crawl.tasks_follow_lists_idx;
