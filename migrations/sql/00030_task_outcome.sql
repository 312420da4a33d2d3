-- How a task ended, as a value SQL reads (crawl.tasks.outcome), beside the
-- reason, which stays text for people. Until now the statements that need
-- to know how a task ended (reuse, retention, revisits, the report, the
-- views) matched the reason's text: 'fresh:%', 'stop_at_seen:%',
-- 'page_limit', 'end'; a reworded reason changed what they decided.
--
-- The values are declared once in Go (kinds.Outcome) and here (the enum
-- crawl.task_outcome); a test holds them equal. Each starts with the state
-- it ends a task in (done, skipped, failed), which a check holds. A task
-- that ended and was found again closer to a seed (reexpand) goes back to
-- pending and keeps its outcome until it ends again; a failed task put back
-- by --retry-failed loses it.
--
-- Existing rows get their outcome from their reason, once, here.

-- +goose Up
CREATE TYPE crawl.task_outcome AS ENUM (
    'done', 'done_end', 'done_page_limit', 'done_stop_at_seen', 'done_guard',
    'skipped_fresh', 'skipped_adaptive', 'skipped_not_found', 'skipped_retired',
    'failed', 'failed_blocked', 'failed_unstorable');
COMMENT ON TYPE crawl.task_outcome IS 'How a task ended (crawl.tasks.outcome, where each value is described); declared in Go as kinds.Outcome.';

ALTER TABLE crawl.tasks ADD COLUMN outcome crawl.task_outcome;
COMMENT ON COLUMN crawl.tasks.outcome IS 'How the task ended, the value SQL reads (the reason says it for people). done: an object fetched; done_end: a list walked to its end (the upstream said no more, or an empty page on a list that does not say); done_page_limit: a list cut by its page limit (the pages past it never seen); done_stop_at_seen: a list cut by stop_at_seen at a page of entries earlier runs stored; done_guard: a list stopped by a loop guard (the cursor sent came back, an empty page claimed more, a cursor the crawler cannot follow); skipped_fresh: refresh_after found an earlier fetch fresh; skipped_adaptive: the adaptive schedule did not revisit it; skipped_not_found: the upstream has no such item; skipped_retired: the endpoint is retired in the job''s dialect; failed: the upstream answered an error retries did not get past; failed_blocked: the platform blocks the item; failed_unstorable: the task or what it fetched cannot be stored (a key over the caps, a page the schema refuses, a kind this crawler does not know). NULL while pending or leased, but a task found again closer to a seed keeps its outcome until it ends again.';
COMMENT ON COLUMN crawl.tasks.reason IS 'Why the task ended, for people: the error of a failed or skipped task, or how a list stopped (no more pages, page limit, repeated cursor...). Statements read outcome, never this text.';

UPDATE crawl.tasks SET outcome = (CASE
    WHEN state = 'failed' AND reason LIKE 'blocked:%' THEN 'failed_blocked'
    WHEN state = 'failed' AND (reason LIKE 'cannot store page:%' OR reason LIKE 'unknown task kind %') THEN 'failed_unstorable'
    WHEN state = 'failed' THEN 'failed'
    WHEN reason LIKE 'fresh:%' THEN 'skipped_fresh'
    WHEN reason LIKE 'adaptive:%' THEN 'skipped_adaptive'
    WHEN state = 'skipped' AND reason LIKE 'retired:%' THEN 'skipped_retired'
    WHEN state = 'skipped' THEN 'skipped_not_found'
    WHEN reason IN ('end', 'empty_page') THEN 'done_end'
    WHEN reason = 'page_limit' THEN 'done_page_limit'
    WHEN reason LIKE 'stop_at_seen:%' THEN 'done_stop_at_seen'
    WHEN reason IN ('repeated_cursor', 'empty_page_more') OR reason LIKE 'bad page cursor %' THEN 'done_guard'
    ELSE 'done' END)::crawl.task_outcome
WHERE state IN ('done', 'skipped', 'failed') OR reason IS NOT NULL;

ALTER TABLE crawl.tasks ADD CONSTRAINT tasks_outcome_check
    CHECK (state IN ('pending', 'leased') OR (outcome IS NOT NULL AND split_part(outcome::text, '_', 1) = state));

CREATE OR REPLACE VIEW crawl.run_ledger AS
SELECT r.id AS run_id, r.job_name, r.credits_billed,
       coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved,
       count(t.id) FILTER (WHERE t.state = 'skipped' AND t.outcome = 'skipped_fresh') AS fetches_skipped,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'skipped' AND t.outcome = 'skipped_fresh'), 0)::bigint AS credits_saved_fresh,
       count(t.id) FILTER (WHERE t.state = 'done' AND t.outcome = 'done_stop_at_seen') AS lists_stopped_at_seen,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'done' AND t.outcome = 'done_stop_at_seen'), 0)::bigint AS pages_not_walked
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
GROUP BY r.id;

CREATE OR REPLACE VIEW shortvideo.follow_walks AS
SELECT t.run_id, t.params->>'handle' AS unique_id,
       CASE t.kind WHEN 'shortvideo.followers' THEN 'followers' ELSE 'following' END AS list,
       t.kind, t.id AS task_id, t.key AS list_key, t.state, t.reason,
       (t.state = 'done' AND t.outcome = 'done_end') AS complete,
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
COMMENT ON COLUMN shortvideo.follow_walks.complete IS 'True when the walk reached the list''s real end: state done and outcome done_end. A page limit, stop_at_seen, a loop guard (a repeated cursor, an empty page claiming more), or a task not done is not complete.';

-- +goose Down
CREATE OR REPLACE VIEW crawl.run_ledger AS
SELECT r.id AS run_id, r.job_name, r.credits_billed,
       coalesce(sum(t.credits_saved), 0)::bigint AS credits_saved,
       count(t.id) FILTER (WHERE t.state = 'skipped' AND t.reason LIKE 'fresh:%') AS fetches_skipped,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'skipped' AND t.reason LIKE 'fresh:%'), 0)::bigint AS credits_saved_fresh,
       count(t.id) FILTER (WHERE t.state = 'done' AND t.reason LIKE 'stop_at_seen:%') AS lists_stopped_at_seen,
       coalesce(sum(t.credits_saved) FILTER (WHERE t.state = 'done' AND t.reason LIKE 'stop_at_seen:%'), 0)::bigint AS pages_not_walked
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
GROUP BY r.id;
CREATE OR REPLACE VIEW shortvideo.follow_walks AS
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
COMMENT ON COLUMN shortvideo.follow_walks.complete IS 'True when the walk reached the list''s real end: state done and reason end or empty_page. A page limit, stop_at_seen, a repeated cursor, an empty page claiming more, or a task not done is not complete.';
ALTER TABLE crawl.tasks DROP CONSTRAINT tasks_outcome_check;
ALTER TABLE crawl.tasks DROP COLUMN outcome;
DROP TYPE crawl.task_outcome;
COMMENT ON COLUMN crawl.tasks.reason IS 'Why the task ended: the error of a failed or skipped task, or how a list stopped (no more pages, page limit, repeated cursor...).';
