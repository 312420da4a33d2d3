-- Adaptive revisits (package pipeline/adaptive): crawl.revisit_items,
-- crawl.revisit_plan and crawl.runs.revisit.

-- name: RevisitItems
-- Every item job @job_name has visited, with its age in days: what the
-- schedule of a new run and crawler plan weigh. One row per item, never
-- the history it was learnt from. reached: the job's previous run (the
-- latest before @before that ended done or stopped) reached it from the
-- job's current seeds (@seed_kinds, @seed_keys; any seed of that run when
-- @all_roots, for seed files) through the edges the job turns on
-- (@edge_from -> @edge_to) within @max_depth; true for every item when
-- there is no such run, or its tasks are gone.
WITH RECURSIVE prev AS (
    SELECT max(id) AS id FROM crawl.runs
    WHERE job_name = @job_name AND id < @before::bigint AND state IN ('done', 'stopped')
), reach AS (
    SELECT t.id, t.kind, t.key FROM crawl.tasks t, prev
    WHERE t.run_id = prev.id AND t.parent_id IS NULL AND t.depth <= @max_depth::int
      AND (@all_roots::boolean OR (t.kind, t.key) IN (SELECT * FROM unnest(@seed_kinds::text[], @seed_keys::text[])))
  UNION ALL
    SELECT c.id, c.kind, c.key FROM reach r
    JOIN crawl.tasks c ON c.parent_id = r.id
    JOIN unnest(@edge_from::text[], @edge_to::text[]) AS e(from_kind, to_kind) ON e.from_kind = r.kind AND e.to_kind = c.kind
    WHERE c.depth <= @max_depth::int
), known AS (
    SELECT (SELECT id FROM prev) IS NULL
        OR NOT EXISTS (SELECT 1 FROM crawl.tasks WHERE run_id = (SELECT id FROM prev)) AS all_reached
)
SELECT i.kind, i.key, coalesce(i.owner, ''), i.visits, i.last_run,
       extract(epoch FROM now() - i.last_visit_at) / 86400, i.rate,
       coalesce(i.page_size, 0), coalesce(i.full_pages, 0), i.edges, i.counter, coalesce(i.counter_run, 0), i.cut,
       known.all_reached OR r.kind IS NOT NULL, i.surprise
FROM crawl.revisit_items i CROSS JOIN known
LEFT JOIN (SELECT DISTINCT kind, key FROM reach) r ON r.kind = i.kind AND r.key = i.key
WHERE i.job_name = @job_name
ORDER BY i.kind, i.key;

-- name: ForgetRevisitItems
-- Removes items of job @job_name that no run reaches any more (the
-- schedule found them unreached, and their last visit is older than twice
-- max_age).
DELETE FROM crawl.revisit_items i
USING unnest(@kinds::text[], @keys::text[]) AS k(kind, key)
WHERE i.job_name = @job_name AND i.kind = k.kind AND i.key = k.key;

-- name: RevisitDecision
-- The run's schedule for one task: whether to visit it, and why. No row:
-- an item the job never visited, which is visited.
SELECT visit, full_walk, reason, yield, cost, cost_high, second_look FROM crawl.revisit_plan
WHERE run_id = @run_id AND kind = @kind AND key = @key;

-- name: SetRunRevisit
-- Records the schedule's totals, or merges what the run captured into them.
UPDATE crawl.runs SET revisit = coalesce(revisit, '{}'::jsonb) || @revisit::jsonb WHERE id = @run_id;

-- name: RunRevisit
SELECT revisit FROM crawl.runs WHERE id = @run_id AND revisit IS NOT NULL;

-- name: RevisitOrder
-- The run's scheduled visits still to come or under way, highest priority
-- first: the order its budget is spent in. A row is a visit of the
-- schedule, or an item it skipped with a decision of @admit (for the
-- budget, or found unreached), which a run admits if the credits left
-- cover it; state is the task's
-- (pending when there is none yet), pages what a leased one bought, mine
-- whether the lease is this process's (its owner tag starts with @owner).
SELECT p.kind, p.key, p.visit, p.cost_high, coalesce(t.state, 'pending'), coalesce(t.pages, 0),
       coalesce(starts_with(t.lease_owner, @owner), false)
FROM crawl.revisit_plan p
LEFT JOIN crawl.tasks t ON t.run_id = p.run_id AND t.kind = p.kind AND t.key = p.key
WHERE p.run_id = @run_id AND (p.visit OR p.reason = ANY(@admit::text[]))
  AND (t.id IS NULL OR t.state IN ('pending', 'leased'))
ORDER BY p.priority DESC;

-- name: SecondLookCandidates
-- Once the run's frontier is done (no task is leased, so no request is in
-- flight): its visits skipped for the budget, highest priority first, each
-- with what it costs at most (the credits left are the budget's admission
-- figure, budget.Hold.LeftNow). Locks the
-- run's row, so two processes ending together admit against the same
-- credits once: the second sees the tasks the first sent back.
SELECT t.id, p.cost_high
FROM crawl.runs r
JOIN crawl.revisit_plan p ON p.run_id = r.id
JOIN crawl.tasks t ON t.run_id = p.run_id AND t.kind = p.kind AND t.key = p.key
WHERE r.id = @run_id AND r.max_credits IS NOT NULL
  AND t.outcome = 'skipped_budget'
  AND NOT EXISTS (SELECT 1 FROM crawl.tasks l WHERE l.run_id = r.id AND l.state IN ('pending', 'leased'))
ORDER BY p.priority DESC
FOR UPDATE OF r;

-- name: SecondLook
-- Sends the tasks @ids (skipped for the budget) back to pending and marks
-- their visits admitted by the second look; a run another process has
-- just recorded done (its figures of this process's requests a beat old)
-- is running again: it is not done while tasks are pending.
WITH t AS (
    UPDATE crawl.tasks SET state = 'pending', reason = NULL, outcome = NULL, finished_at = NULL, credits_saved = 0, updated_at = now()
    WHERE id = ANY(@ids::bigint[]) AND state = 'skipped'
    RETURNING run_id, kind, key
), p AS (
    UPDATE crawl.revisit_plan p SET second_look = true FROM t
    WHERE p.run_id = t.run_id AND p.kind = t.kind AND p.key = t.key
)
UPDATE crawl.runs r SET state = 'running', stop_reason = NULL, finished_at = NULL
WHERE r.id IN (SELECT run_id FROM t) AND r.state = 'done';

-- name: SetRevisitPending
-- A process starts working on run @run_id: what it sees is to be recorded.
UPDATE crawl.runs SET revisit_pending = true WHERE id = @run_id AND NOT revisit_pending;

-- name: RevisitRunsToRecord
-- The runs of job @job_name before @before whose visits are still to be
-- recorded and that no process works on (no live lease): killed, or
-- abandoned, or ended while their recording failed. Oldest first.
SELECT r.id FROM crawl.runs r
WHERE r.job_name = @job_name AND r.revisit_pending AND r.id < @before
  AND NOT EXISTS (SELECT 1 FROM crawl.tasks t WHERE t.run_id = r.id AND t.state = 'leased' AND t.lease_expires_at > now())
ORDER BY r.id;

-- name: RevisitEnded
-- A batch of run @run_id's visits not recorded yet (tasks of @kinds that
-- ended done after at least one request, whose item's last recorded run
-- is an earlier one), in (kind, key) order after (@after_kind, @after_key):
-- the end of a run goes through its visits in bounded steps.
SELECT t.id, t.kind, t.key FROM crawl.tasks t
WHERE t.run_id = @run_id AND t.kind = ANY(@kinds::text[]) AND (t.kind, t.key) > (@after_kind::text, @after_key::text)
  AND t.state = 'done' AND t.pages > 0
  AND NOT EXISTS (SELECT 1 FROM crawl.revisit_items i
                  WHERE i.job_name = @job_name AND i.kind = t.kind AND i.key = t.key AND i.last_run >= t.run_id)
ORDER BY t.kind, t.key
LIMIT @batch;

-- name: RevisitVisits
-- What run @run_id saw of the visits among tasks @ids (those of @kinds
-- that ended done after at least one request): for lists, the entries no
-- earlier run stored, whether the walk was capped or reached the end, and
-- the owner's latest counter of the list; for short-video profiles,
-- whether their graph counters (follower_count, following_count) differ
-- from the account's previous snapshot, and those counters. Reads the
-- tasks by id and, per task, the latest snapshots by index.
SELECT t.kind, t.key, coalesce(t.params->>'handle', ''), t.finished_at, t.pages, t.items, t.new_items,
       t.outcome = 'done_page_limit',
       t.outcome NOT IN ('done_page_limit', 'done_stop_at_seen', 'done_window'),
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
WHERE t.id = ANY(@ids::bigint[]) AND t.run_id = @run_id AND t.state = 'done' AND t.pages > 0 AND t.kind = ANY(@kinds::text[]);

-- name: LockRevisitItems
-- Serializes the recording of job @job_name's visits (two processes
-- ending runs of one job, a flush and a run's end), for the transaction.
SELECT pg_advisory_xact_lock(hashtextextended('crawl.revisit_items: ' || @job_name, 0));

-- name: RevisitKnown
-- The items of job @job_name among (@kinds, @keys), as their observations
-- are updated: the state each new visit is added to.
SELECT i.kind, i.key, i.visits, i.last_run, i.last_visit_at, i.intervals, i.events, i.censored,
       i.page_size, i.full_pages, i.edges, i.rate
FROM crawl.revisit_items i
JOIN unnest(@kinds::text[], @keys::text[]) AS k(kind, key) ON i.kind = k.kind AND i.key = k.key
WHERE i.job_name = @job_name;

-- name: UpsertRevisitItem
-- Writes an item's observations and estimate after a visit.
INSERT INTO crawl.revisit_items AS i (job_name, kind, key, owner, visits, last_run, last_visit_at,
    intervals, events, censored, rate, page_size, full_pages, edges, counter, counter_run, surprise)
VALUES (@job_name, @kind, @key, NULLIF(@owner::text, ''), @visits, @last_run, @last_visit_at,
    @intervals, @events, @censored, @rate, @page_size, @full_pages, @edges, @counter, @counter_run, @surprise)
ON CONFLICT (job_name, kind, key) DO UPDATE SET
    owner = EXCLUDED.owner, visits = EXCLUDED.visits, last_run = EXCLUDED.last_run,
    last_visit_at = EXCLUDED.last_visit_at, intervals = EXCLUDED.intervals, events = EXCLUDED.events,
    censored = EXCLUDED.censored, rate = EXCLUDED.rate, page_size = EXCLUDED.page_size,
    full_pages = EXCLUDED.full_pages, edges = EXCLUDED.edges, surprise = EXCLUDED.surprise,
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
  AND (CASE i.kind WHEN 'shortvideo.followers' THEN c.followers ELSE c.following END) IS NOT NULL
  AND (i.counter_run IS NULL OR i.counter_run <= @run_id);

-- name: AddRunCaptured
-- Adds what a batch of run @run_id's revisits captured to its totals
-- (adaptive runs only: those with a schedule's totals).
UPDATE crawl.runs SET revisit = revisit || jsonb_build_object('captured', jsonb_build_object(
    'items', coalesce((revisit->'captured'->>'items')::bigint, 0) + @items,
    'events', coalesce((revisit->'captured'->>'events')::float8, 0) + @events,
    'credits', coalesce((revisit->'captured'->>'credits')::bigint, 0) + @credits,
    'new_items', coalesce((revisit->'captured'->>'new_items')::bigint, 0) + @new_items,
    'new_credits', coalesce((revisit->'captured'->>'new_credits')::bigint, 0) + @new_credits))
WHERE id = @run_id AND revisit IS NOT NULL;

-- name: MarkWalksCut
-- The lists of job @job_name whose walk run @run_id left unfinished: their
-- next visit walks them whole.
UPDATE crawl.revisit_items i SET cut = true
FROM crawl.tasks t
WHERE t.run_id = @run_id AND t.pages > 0 AND t.state IN ('pending', 'leased', 'failed') AND t.kind = ANY(@kinds::text[])
  AND i.job_name = @job_name AND i.kind = t.kind AND i.key = t.key AND i.last_run < t.run_id AND NOT i.cut;

-- name: EndRevisitRecord
-- Run @run_id's visits are all recorded.
UPDATE crawl.runs SET revisit_pending = false,
    revisit = CASE WHEN revisit IS NULL THEN NULL ELSE revisit || '{"recorded": true}'::jsonb END
WHERE id = @run_id;
