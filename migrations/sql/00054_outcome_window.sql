-- A list walk that its date window (expand.<edge>.posted_after, issue 32)
-- ended: the page reached entries posted before the window, so the pages
-- past it are older still and never bought. Not a walk to the list's end
-- (neither complete nor capped by its page limit): reuse, revisits and
-- retention read it as they read a walk cut short. Without a transaction,
-- as 00036: a value added to an enum cannot be used in the transaction
-- that adds it.

-- +goose NO TRANSACTION
-- +goose Up
ALTER TYPE crawl.task_outcome ADD VALUE IF NOT EXISTS 'done_window' AFTER 'done_guard';
COMMENT ON COLUMN crawl.tasks.outcome IS 'How the task ended, the value SQL reads (the reason says it for people). done: an object fetched; done_end: a list walked to its end (the upstream said no more, or an empty page on a list that does not say); done_page_limit: a list cut by its page limit (the pages past it never seen); done_stop_at_seen: a list cut by stop_at_seen at a page of entries earlier runs stored; done_guard: a list stopped by a loop guard (the cursor sent came back, an empty page claimed more, a cursor the crawler cannot follow); done_window: a list ended by its date window (posted_after: the page reached entries posted before it, and the pages past it are older still, never bought); skipped_fresh: refresh_after found an earlier fetch fresh; skipped_adaptive: the adaptive schedule did not revisit it; skipped_budget: the adaptive schedule wanted it but the night''s credits left did not cover it (the second look may admit it once the frontier is done); skipped_not_found: the upstream has no such item; skipped_retired: the endpoint is retired in the job''s dialect; failed: the upstream answered an error retries did not get past; failed_blocked: the platform blocks the item; failed_unstorable: the task or what it fetched cannot be stored (a key over the caps, a page the schema refuses, a kind this crawler does not know). NULL while pending or leased, but a task found again closer to a seed keeps its outcome until it ends again.';

-- +goose Down
-- An enum value cannot be dropped: windowed walks become page-limited ones
-- (the pages past them never seen) and the value stays unused.
UPDATE crawl.tasks SET outcome = 'done_page_limit' WHERE outcome = 'done_window';
COMMENT ON COLUMN crawl.tasks.outcome IS 'How the task ended, the value SQL reads (the reason says it for people). done: an object fetched; done_end: a list walked to its end (the upstream said no more, or an empty page on a list that does not say); done_page_limit: a list cut by its page limit (the pages past it never seen); done_stop_at_seen: a list cut by stop_at_seen at a page of entries earlier runs stored; done_guard: a list stopped by a loop guard (the cursor sent came back, an empty page claimed more, a cursor the crawler cannot follow); skipped_fresh: refresh_after found an earlier fetch fresh; skipped_adaptive: the adaptive schedule did not revisit it; skipped_budget: the adaptive schedule wanted it but the night''s credits left did not cover it (the second look may admit it once the frontier is done); skipped_not_found: the upstream has no such item; skipped_retired: the endpoint is retired in the job''s dialect; failed: the upstream answered an error retries did not get past; failed_blocked: the platform blocks the item; failed_unstorable: the task or what it fetched cannot be stored (a key over the caps, a page the schema refuses, a kind this crawler does not know). NULL while pending or leased, but a task found again closer to a seed keeps its outcome until it ends again.';
