-- Reuse across runs (package pipeline, reuse.go): refresh_after and
-- stop_at_seen. A fetch counts as successful when its task ended done; a
-- task skipped as fresh is not a fetch, so freshness never chains.

-- name: LastFetch
-- The latest successful fetch of (@kind, @key) by another run within the
-- window (microseconds).
SELECT run_id, finished_at FROM crawl.tasks
WHERE kind = @kind AND key = @key AND state = 'done' AND run_id <> @run_id
  AND finished_at >= now() - @window_us::bigint * interval '1 microsecond'
ORDER BY finished_at DESC LIMIT 1;

-- name: EndFresh
-- Ends a leased task as skipped because its entity is fresh, recording the
-- credits it saved; for a commit batch (with the tasks expanded from stored
-- data), aborted by crawl.expect_advanced when the lease is gone.
WITH ended AS (
    UPDATE crawl.tasks SET state = CASE WHEN reexpand THEN 'pending' ELSE 'skipped' END,
        reason = @reason, outcome = @outcome::text::crawl.task_outcome, credits_saved = @saved, lease_expires_at = NULL,
        finished_at = now(), updated_at = now()
    WHERE id = @id AND lease_token = @token AND state = 'leased'
    RETURNING 1
)
SELECT crawl.expect_advanced((SELECT count(*) FROM ended));

-- name: LastFullWalk
-- The latest full walk of list (@kind, @key) by an earlier run: one that
-- reached the list's end, neither cut short by stop_at_seen nor capped by
-- its page limit or its date window (a capped walk never saw the pages
-- past the cap: trusting it would leave them unbought for good). Its pages and age
-- (microseconds), and how many walks of the list stop_at_seen cut short
-- since.
SELECT f.run_id, f.pages, (extract(epoch FROM now() - f.finished_at) * 1000000)::bigint,
       (SELECT count(*) FROM crawl.tasks s
        WHERE s.kind = @kind AND s.key = @key AND s.state = 'done' AND s.run_id < @run_id
          AND s.outcome = 'done_stop_at_seen' AND s.finished_at > f.finished_at)
FROM crawl.tasks f
WHERE f.kind = @kind AND f.key = @key AND f.state = 'done' AND f.run_id < @run_id
  AND f.outcome NOT IN ('done_stop_at_seen', 'done_page_limit', 'done_window')
ORDER BY f.finished_at DESC LIMIT 1;

-- name: StoredProfile
-- What a short-video profile fetch stored: its secUid, user id and whether
-- it is private (refresh_after expands a fresh profile from it).
SELECT coalesce(sec_uid, ''), coalesce(user_id, ''), coalesce(private_account, false) FROM shortvideo.users
WHERE unique_id = @unique_id AND profile_fetched;

-- template: SeenKeys
-- stop_at_seen (kinds.seenBy): how many of the entries @keys of a page of
-- @owner's list earlier runs stored, in the list's table .table (the
-- owner in column .owner, an entry's key in .key). Earlier runs only
-- (first_seen_run < @run_id): an entry this run stored first, as a page
-- written again after a crash, does not stop the run's own walk. The
-- Seen* counts here and in content.sql are this template.
SELECT count(*) FROM {{.table}}
WHERE {{.owner}} = @owner AND {{.key}} = ANY(@keys::text[]) AND first_seen_run < @run_id;

-- name: SeenFollowers
-- How many of @keys (followers of @owner) earlier runs stored.
-- from: SeenKeys table=shortvideo.follows owner=followee key=follower

-- name: SeenFollowing
-- How many of @keys (accounts @owner follows) earlier runs stored.
-- from: SeenKeys table=shortvideo.follows owner=follower key=followee

-- name: SeenComments
-- How many of the comments @keys (comment_key) of post @owner (post_code)
-- earlier runs stored.
-- from: SeenKeys table=photosocial.comments owner=post_code key=comment_key

-- name: SeenSongVideos
-- How many of the videos @keys of song @owner earlier runs stored as its
-- videos.
-- from: SeenKeys table=shortvideo.song_videos owner=song_id key=video_id

-- name: RunSavings
-- The credits reuse saved a run (crawl.run_ledger).
SELECT credits_saved, fetches_skipped, credits_saved_fresh, lists_stopped_at_seen, credits_not_walked
FROM crawl.run_ledger WHERE run_id = @run_id;

-- name: RunFollowers
-- The followers of @owner a walk of run @run_id stored (a list expanded
-- again at a smaller depth).
SELECT follower FROM shortvideo.follows WHERE followee = @owner AND last_seen_run = @run_id ORDER BY follower;

-- name: RunFollowing
-- The accounts @owner follows that a walk of run @run_id stored.
SELECT followee FROM shortvideo.follows WHERE follower = @owner AND last_seen_run = @run_id ORDER BY followee;

-- name: KnownFollowers
-- The followers of @owner as the job's runs up to @run_id know list
-- (@kind, @key) (adaptive revisits: a list skipped or cut by stop_at_seen
-- still leads to its entries): those a run of the job started within the
-- last @within_us microseconds (twice max_age) saw last, newest first, at
-- most the list's page limit (@max_pages, 0: none) of pages of its page
-- size as learnt. Read from the edges and the runs, which crawler prune
-- keeps. An edge another job saw since is left out: the edge keeps only
-- the last run that saw it.
SELECT f.follower FROM shortvideo.follows f JOIN crawl.runs r ON r.id = f.last_seen_run
WHERE f.followee = @owner AND f.last_seen_run <= @run_id AND r.started_at >= now() - @within_us::bigint * interval '1 microsecond'
  AND r.job_name = (SELECT job_name FROM crawl.runs WHERE id = @run_id)
ORDER BY f.last_seen_run DESC, f.first_seen_run DESC, f.follower
LIMIT (SELECT ceil(i.page_size * @max_pages::int)::bigint FROM crawl.revisit_items i JOIN crawl.runs j ON j.job_name = i.job_name
       WHERE j.id = @run_id AND i.kind = @kind AND i.key = @key AND @max_pages::int > 0);

-- name: KnownFollowing
-- The accounts @owner follows as the job's runs know list (@kind, @key),
-- as KnownFollowers.
SELECT f.followee FROM shortvideo.follows f JOIN crawl.runs r ON r.id = f.last_seen_run
WHERE f.follower = @owner AND f.last_seen_run <= @run_id AND r.started_at >= now() - @within_us::bigint * interval '1 microsecond'
  AND r.job_name = (SELECT job_name FROM crawl.runs WHERE id = @run_id)
ORDER BY f.last_seen_run DESC, f.first_seen_run DESC, f.followee
LIMIT (SELECT ceil(i.page_size * @max_pages::int)::bigint FROM crawl.revisit_items i JOIN crawl.runs j ON j.job_name = i.job_name
       WHERE j.id = @run_id AND i.kind = @kind AND i.key = @key AND @max_pages::int > 0);

-- name: RunSongVideoAuthors
-- The authors of the videos of song @owner that a walk of run @run_id
-- stored.
SELECT CASE WHEN v.author_unique_id NOT LIKE 'secuid:%' THEN v.author_unique_id ELSE coalesce('user_id:' || u.user_id, '') END
FROM shortvideo.song_videos l JOIN shortvideo.videos v USING (video_id)
LEFT JOIN shortvideo.users u ON u.unique_id = v.author_unique_id AND v.author_unique_id LIKE 'secuid:%'
WHERE l.song_id = @owner AND l.last_seen_run = @run_id AND v.author_unique_id IS NOT NULL
ORDER BY l.video_id;

-- name: RunFeedAuthors
-- The authors of the videos of feed @owner (trending, popular_videos) as
-- run @run_id fetched it, by rank.
SELECT CASE WHEN v.author_unique_id NOT LIKE 'secuid:%' THEN v.author_unique_id ELSE coalesce('user_id:' || u.user_id, '') END
FROM shortvideo.feed_entries f JOIN shortvideo.videos v USING (video_id)
LEFT JOIN shortvideo.users u ON u.unique_id = v.author_unique_id AND v.author_unique_id LIKE 'secuid:%'
WHERE f.feed = @owner AND f.run_id = @run_id AND v.author_unique_id IS NOT NULL
ORDER BY f.rank;

-- name: RunSearchResults
-- The results of search @search_kind @query_key in run @run_id, by rank:
-- each one's type, its video's author (as above), its account and its
-- song.
SELECT s.result_type,
       CASE WHEN v.author_unique_id NOT LIKE 'secuid:%' THEN v.author_unique_id ELSE coalesce('user_id:' || u.user_id, '') END,
       coalesce(s.unique_id, ''), coalesce(s.song_id, '')
FROM shortvideo.search_results s LEFT JOIN shortvideo.videos v USING (video_id)
LEFT JOIN shortvideo.users u ON u.unique_id = v.author_unique_id AND v.author_unique_id LIKE 'secuid:%'
WHERE s.run_id = @run_id AND s.search_kind = @search_kind AND s.query_key = @query_key
ORDER BY s.rank;

-- name: RunReelCodes
-- The codes of the reels reels search @owner (its query key) found in run
-- @run_id, and the URL their answer carried ('' when none), by rank.
SELECT r.code, coalesce(r.raw->>'url', '') FROM photosocial.reel_search_results s JOIN photosocial.reels r USING (reel_id)
WHERE s.query_key = @owner AND s.run_id = @run_id AND r.code IS NOT NULL
ORDER BY s.rank;

-- Content lists bought again only when they changed (kinds.ChangeRule,
-- pipeline/reuse.go: skipUnchanged; migration 00053).

-- name: LastContentWalk
-- The latest walk of content list (@kind, @key), by any run: the counter
-- its parent page showed then, the run, its pages, and its age
-- (microseconds).
SELECT count, run_id, pages, walked_at, (extract(epoch FROM now() - walked_at) * 1000000)::bigint
FROM crawl.content_walks WHERE kind = @kind AND key = @key;

-- name: RecordContentWalk
-- Records the end of run @run_id's walk of content list (@kind, @key):
-- the counter its parent page showed (@count, NULL when none), its pages
-- and outcome. An older run's walk ending late does not replace a newer
-- one's.
INSERT INTO crawl.content_walks AS w (kind, key, count, run_id, pages, outcome)
VALUES (@kind, @key, @count, @run_id, @pages, @outcome::text::crawl.task_outcome)
ON CONFLICT (kind, key) DO UPDATE SET count = EXCLUDED.count, run_id = EXCLUDED.run_id, pages = EXCLUDED.pages,
    outcome = EXCLUDED.outcome, walked_at = now()
WHERE w.run_id <= EXCLUDED.run_id;

-- name: MarkSVCommentsGone
-- A walk of run @run_id reached the end of the comments of video @owner
-- (@parent ''), or of the replies to comment @parent: the stored ones it
-- did not find, and not marked since they were last seen, are marked
-- deleted by it (deleted_run); their rows stay.
UPDATE shortvideo.comments SET deleted_run = @run_id
WHERE video_id = @owner AND parent_comment_id IS NOT DISTINCT FROM NULLIF(@parent, '')
  AND last_seen_run < @run_id AND (deleted_run IS NULL OR deleted_run <= last_seen_run);

-- name: MarkPSCommentsGone
-- MarkSVCommentsGone for the comments of post @owner (its code), or the
-- replies to comment @parent.
UPDATE photosocial.comments SET deleted_run = @run_id
WHERE post_code = @owner AND parent_comment_id IS NOT DISTINCT FROM NULLIF(@parent, '')
  AND last_seen_run < @run_id AND (deleted_run IS NULL OR deleted_run <= last_seen_run);
