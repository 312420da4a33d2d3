-- The page archive (package pipeline/frontier, archive.go): crawl.pages.

-- name: ArchivePage
-- Queued in the page's commit batch, after its advance: a stale worker's
-- batch aborts before it. A page is archived once.
INSERT INTO crawl.pages (run_id, task_id, page, cursor, items, endpoint, query, body, body_bytes)
VALUES (@run_id, @task_id, @page, @cursor, @items, @endpoint, @query, @body, @body_bytes)
ON CONFLICT (run_id, task_id, page) DO NOTHING;

-- name: ArchivedPages
-- The run's archived pages after (@after_task, @after_page), in task and
-- page order, with their task: the replay reads them a chunk at a time.
SELECT p.task_id, p.page, p.cursor, p.items, p.endpoint, p.query, p.body,
       t.kind, t.key, t.params, t.depth, t.max_pages
FROM crawl.pages p JOIN crawl.tasks t ON t.id = p.task_id
WHERE p.run_id = @run_id AND (p.task_id, p.page) > (@after_task::bigint, @after_page::int)
ORDER BY p.task_id, p.page
LIMIT @lim;

-- name: RunJobSpec
-- The job a run was started with (as loaded, secrets excluded), and how
-- long its processes worked and what they wrote: the replay compares its
-- speed with the harvest's.
SELECT r.job,
       coalesce((SELECT sum(rows_written) FROM crawl.run_processes p WHERE p.run_id = r.id), 0)::bigint,
       coalesce(extract(epoch FROM coalesce(r.finished_at, now()) - r.started_at), 0)::float8,
       (SELECT count(*) FROM crawl.pages p WHERE p.run_id = r.id)
FROM crawl.runs r WHERE r.id = @run_id;
