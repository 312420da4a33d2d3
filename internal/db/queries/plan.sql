-- `crawler plan` (package pipeline, plan.go): read-only lookups of a job's
-- earlier runs.

-- name: LastDoneRun
-- The job's latest completed run: its tasks are the history an estimate
-- is made from.
SELECT id, credits_billed FROM crawl.runs
WHERE job_name = @job_name AND state = 'done'
ORDER BY id DESC LIMIT 1;

-- name: RunTaskTree
-- A run's tasks with their parent (0 for a seed) and pages.
SELECT id, coalesce(parent_id, 0) AS parent_id, kind, key, pages::bigint AS pages
FROM crawl.tasks WHERE run_id = @run_id;

-- name: ObservedEntriesPerPage
-- The largest average page (entries per page, rounded up) of the lists of
-- the job's runs that walked more than one page (their first pages are
-- full); 0 when none did. A finished run's is its summary
-- (crawl.runs.entries_per_page): only a run without one reads its tasks.
-- (Two parts, not a subquery per run: the planner would cost one per run
-- and compile it, JIT, for seconds.)
SELECT coalesce(greatest(
    (SELECT max(r.entries_per_page) FROM crawl.runs r WHERE r.job_name = @job_name),
    (SELECT max(ceil(t.items::numeric / t.pages)) FROM crawl.runs r JOIN crawl.tasks t ON t.run_id = r.id
     WHERE r.job_name = @job_name AND r.entries_per_page IS NULL AND t.pages > 1)), 0)::bigint;

-- name: StoredWindow
-- A creator's dated list (@kind: shortvideo.profile_videos,
-- photosocial.user_posts or photosocial.user_reels) of @owner as earlier
-- runs stored it, for crawler plan's line on a date window: its entries,
-- those posted at or after @after (NULL: no bound), and those within
-- [@after, @before).
SELECT count(*), count(*) FILTER (WHERE @after::timestamptz IS NULL OR e.at >= @after::timestamptz),
       count(*) FILTER (WHERE (@after::timestamptz IS NULL OR e.at >= @after::timestamptz)
                          AND (@before::timestamptz IS NULL OR e.at < @before::timestamptz))
FROM (
    SELECT v.create_time AS at FROM shortvideo.profile_videos l JOIN shortvideo.videos v USING (video_id)
    WHERE @kind::text = 'shortvideo.profile_videos' AND l.unique_id = @owner::text
    UNION ALL
    SELECT p.taken_at FROM photosocial.profile_posts l JOIN photosocial.posts p USING (code)
    WHERE @kind::text = 'photosocial.user_posts' AND l.username = @owner::text
    UNION ALL
    SELECT r.taken_at FROM photosocial.profile_reels l JOIN photosocial.reels r USING (reel_id)
    WHERE @kind::text = 'photosocial.user_reels' AND l.username = @owner::text
) e;

-- name: ContentListsOfRun
-- The content lists (kinds @kinds, kinds.ChangeRule) run @run_id reached:
-- each one's params (the counter its parent page showed), refresh_after
-- (microseconds, 0: none), page limit and the pages the run bought of it.
SELECT kind, key, params::text AS params, coalesce((extract(epoch FROM refresh_after) * 1000000)::bigint, 0) AS refresh_us,
       max_pages, pages::bigint AS pages
FROM crawl.tasks WHERE run_id = @run_id AND kind = ANY(@kinds::text[])
ORDER BY kind, key;

-- name: ContentCountPerPage
-- The counter's mass a page of each kind of content list (@kinds) held at
-- its latest walks (crawl.content_walks with a counter): what a list
-- never walked, or a rise, is expected to take.
SELECT kind, (sum(count)::float8 / sum(pages))::float8 AS per_page
FROM crawl.content_walks WHERE kind = ANY(@kinds::text[]) AND count > 0 AND pages > 0
GROUP BY kind;
