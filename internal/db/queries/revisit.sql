-- Adaptive revisits (package pipeline, revisit.go): crawl.revisit_items,
-- crawl.revisit_plan and crawl.runs.revisit.

-- name: RevisitItems
-- Every item job @job_name has visited, with its age in days: what the
-- schedule of a new run and crawler plan weigh. One row per item, never
-- the history it was learnt from.
SELECT kind, key, coalesce(owner, ''), visits, last_run,
       extract(epoch FROM now() - last_visit_at) / 86400, rate,
       coalesce(page_size, 0), coalesce(full_pages, 0), edges, counter, coalesce(counter_run, 0), cut
FROM crawl.revisit_items WHERE job_name = @job_name
ORDER BY kind, key;

-- name: RevisitDecision
-- The run's schedule for one task: whether to visit it, and why. No row:
-- an item the job never visited, which is visited.
SELECT visit, full_walk, reason, yield, cost FROM crawl.revisit_plan
WHERE run_id = @run_id AND kind = @kind AND key = @key;

-- name: SetRunRevisit
-- Records the schedule's totals, or merges what the run captured into them.
UPDATE crawl.runs SET revisit = coalesce(revisit, '{}'::jsonb) || @revisit::jsonb WHERE id = @run_id;

-- name: RunRevisit
SELECT revisit FROM crawl.runs WHERE id = @run_id AND revisit IS NOT NULL;

-- name: RevisitVisits
-- What run @run_id saw of the items it visited (tasks of @kinds that ended
-- done after at least one request): for lists, the entries no earlier run
-- stored, whether the walk was capped or reached the end, and the owner's
-- latest counter of the list; for short-video profiles, whether their graph
-- counters (follower_count, following_count) differ from the account's
-- previous snapshot, and those counters. Reads
-- only the run's tasks and, per task, the latest snapshots by index.
SELECT t.kind, t.key, coalesce(t.params->>'handle', ''), t.finished_at, t.pages, t.items, t.new_items,
       t.outcome = 'done_page_limit',
       t.outcome NOT IN ('done_page_limit', 'done_stop_at_seen'),
       CASE WHEN t.kind = 'shortvideo.profile' THEN (
           SELECT (c.follower_count, c.following_count) IS DISTINCT FROM (p.follower_count, p.following_count)
           FROM shortvideo.user_snapshots c
           JOIN LATERAL (SELECT * FROM shortvideo.user_snapshots p
                         WHERE p.unique_id = c.unique_id AND p.run_id < c.run_id
                         ORDER BY p.run_id DESC LIMIT 1) p ON true
           WHERE c.unique_id = t.key AND c.run_id = @run_id) END,
       CASE t.kind
           WHEN 'shortvideo.followers' THEN (SELECT s.follower_count FROM shortvideo.user_snapshots s
               WHERE s.unique_id = t.params->>'handle' ORDER BY s.run_id DESC LIMIT 1)
           WHEN 'shortvideo.following' THEN (SELECT s.following_count FROM shortvideo.user_snapshots s
               WHERE s.unique_id = t.params->>'handle' ORDER BY s.run_id DESC LIMIT 1)
       END,
       CASE WHEN t.kind IN ('shortvideo.followers', 'shortvideo.following') THEN (SELECT s.run_id FROM shortvideo.user_snapshots s
           WHERE s.unique_id = t.params->>'handle' ORDER BY s.run_id DESC LIMIT 1) END,
       CASE WHEN t.kind = 'shortvideo.profile' THEN (SELECT s.follower_count FROM shortvideo.user_snapshots s
           WHERE s.unique_id = t.key AND s.run_id = @run_id) END,
       CASE WHEN t.kind = 'shortvideo.profile' THEN (SELECT s.following_count FROM shortvideo.user_snapshots s
           WHERE s.unique_id = t.key AND s.run_id = @run_id) END
FROM crawl.tasks t
WHERE t.run_id = @run_id AND t.state = 'done' AND t.pages > 0 AND t.kind = ANY(@kinds::text[]);

-- name: RevisitKnown
-- The items of job @job_name among (@kinds, @keys), as their observations
-- are updated: the state each new visit is added to.
SELECT i.kind, i.key, i.visits, i.last_run, i.last_visit_at, i.intervals, i.events, i.censored,
       i.page_size, i.full_pages, i.edges
FROM crawl.revisit_items i
JOIN unnest(@kinds::text[], @keys::text[]) AS k(kind, key) ON i.kind = k.kind AND i.key = k.key
WHERE i.job_name = @job_name;

-- name: UpsertRevisitItem
-- Writes an item's observations and estimate after a visit.
INSERT INTO crawl.revisit_items AS i (job_name, kind, key, owner, visits, last_run, last_visit_at,
    intervals, events, censored, rate, page_size, full_pages, edges, counter, counter_run)
VALUES (@job_name, @kind, @key, NULLIF(@owner::text, ''), @visits, @last_run, @last_visit_at,
    @intervals, @events, @censored, @rate, @page_size, @full_pages, @edges, @counter, @counter_run)
ON CONFLICT (job_name, kind, key) DO UPDATE SET
    owner = EXCLUDED.owner, visits = EXCLUDED.visits, last_run = EXCLUDED.last_run,
    last_visit_at = EXCLUDED.last_visit_at, intervals = EXCLUDED.intervals, events = EXCLUDED.events,
    censored = EXCLUDED.censored, rate = EXCLUDED.rate, page_size = EXCLUDED.page_size,
    full_pages = EXCLUDED.full_pages, edges = EXCLUDED.edges,
    counter = coalesce(EXCLUDED.counter, i.counter), counter_run = coalesce(EXCLUDED.counter_run, i.counter_run),
    cut = i.cut AND NOT @complete
WHERE i.last_run < EXCLUDED.last_run;

-- name: SetListCounters
-- A profile visit's counters become its lists' counters (follower_count
-- for its followers list, following_count for its following list).
UPDATE crawl.revisit_items i SET counter = CASE i.kind WHEN 'shortvideo.followers' THEN c.followers ELSE c.following END,
    counter_run = @run_id
FROM unnest(@owners::text[], @followers::bigint[], @following::bigint[]) AS c(owner, followers, following)
WHERE i.job_name = @job_name AND i.owner = c.owner AND i.kind IN ('shortvideo.followers', 'shortvideo.following')
  AND (CASE i.kind WHEN 'shortvideo.followers' THEN c.followers ELSE c.following END) IS NOT NULL;

-- name: RevisitOrder
-- The run's scheduled visits not made yet (a process joining or resuming
-- the run leaves out those ended), highest priority first, with their
-- expected cost: the order its budget is spent in.
SELECT p.kind, p.key, p.cost FROM crawl.revisit_plan p
WHERE p.run_id = @run_id AND p.visit AND NOT EXISTS (
    SELECT 1 FROM crawl.tasks t WHERE t.run_id = p.run_id AND t.kind = p.kind AND t.key = p.key
      AND t.state IN ('done', 'failed', 'skipped'))
ORDER BY p.priority DESC;

-- name: CreditsLeft
-- The credits of the run's budget neither billed nor held by a lease
-- (NULL: no budget).
SELECT max_credits - credits_committed FROM crawl.runs WHERE id = @run_id;

-- name: MarkWalksCut
-- The lists of job @job_name whose walk run @run_id left unfinished: their
-- next visit walks them whole.
UPDATE crawl.revisit_items i SET cut = true
FROM crawl.tasks t
WHERE t.run_id = @run_id AND t.pages > 0 AND t.state IN ('pending', 'leased', 'failed') AND t.kind = ANY(@kinds::text[])
  AND i.job_name = @job_name AND i.kind = t.kind AND i.key = t.key;
