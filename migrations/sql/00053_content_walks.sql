-- Content bought again only when it changed (issue 32; docs/reuse.md,
-- "Content lists"): a video's comments, a comment's replies, a post's or
-- reel's comments are walked again only when the counter on the parent page
-- a run bought (a video's comment count, a comment's reply count, a post's
-- comment count) differs from the one seen when the list was last walked,
-- when it was never walked, or when the edge's refresh_after has passed.
-- crawl.content_walks is that memory, one row per list; a task the rule
-- skips ends skipped_unchanged. A walk to a list's end marks the stored
-- entries it no longer found (deleted_run), keeping their rows. Without a
-- transaction: a value added to an enum cannot be used in the transaction
-- that adds it (as 00036).

-- +goose NO TRANSACTION
-- +goose Up
ALTER TYPE crawl.task_outcome ADD VALUE IF NOT EXISTS 'skipped_unchanged' AFTER 'skipped_budget';

CREATE TABLE IF NOT EXISTS crawl.content_walks (
    kind        text        NOT NULL,
    key         text        NOT NULL,
    count       bigint,
    run_id      bigint      NOT NULL REFERENCES crawl.runs (id),
    pages       integer     NOT NULL CHECK (pages >= 0),
    outcome     crawl.task_outcome NOT NULL,
    walked_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, key)
);
COMMENT ON TABLE crawl.content_walks IS 'The latest walk of each content list (a video''s comments, a comment''s replies, a post''s or reel''s comments), by any job: the counter its parent page showed then. A run walks such a list again only when the parent page it bought shows another count, when the list was never walked, or when expand.<edge>.refresh_after has passed since walked_at (expand.<edge>.changed_only: false walks it every time).';
COMMENT ON COLUMN crawl.content_walks.kind IS 'The list''s task kind (crawl.tasks.kind), e.g. shortvideo.video_comments.';
COMMENT ON COLUMN crawl.content_walks.key IS 'The list''s task key (crawl.tasks.key): the video''s or post''s URL, or the comment''s id for its replies.';
COMMENT ON COLUMN crawl.content_walks.count IS 'The counter the parent page showed when the list was walked (a video''s or post''s comment count, a comment''s reply count); NULL when the parent page carried none (such a list is walked every time).';
COMMENT ON COLUMN crawl.content_walks.run_id IS 'The run that walked it last.';
COMMENT ON COLUMN crawl.content_walks.pages IS 'Pages that walk bought (what a skip saves, at the endpoint''s price).';
COMMENT ON COLUMN crawl.content_walks.outcome IS 'How that walk ended: done_end (the list''s end: entries not found were marked deleted), done_page_limit, done_stop_at_seen or done_guard.';
COMMENT ON COLUMN crawl.content_walks.walked_at IS 'When that walk ended.';

ALTER TABLE shortvideo.comments ADD COLUMN IF NOT EXISTS deleted_run bigint REFERENCES crawl.runs (id);
COMMENT ON COLUMN shortvideo.comments.deleted_run IS 'The first run whose walk of the comment''s list to its end (the video''s comments, or the comment''s replies) no longer found it after last_seen_run. The comment counts as deleted while deleted_run > last_seen_run; a later walk that finds it again moves last_seen_run past it. The row is kept.';
ALTER TABLE photosocial.comments ADD COLUMN IF NOT EXISTS deleted_run bigint REFERENCES crawl.runs (id);
COMMENT ON COLUMN photosocial.comments.deleted_run IS 'The first run whose walk of the comment''s list to its end (the post''s comments, or the comment''s replies) no longer found it after last_seen_run. The comment counts as deleted while deleted_run > last_seen_run; a later walk that finds it again moves last_seen_run past it. The row is kept.';

COMMENT ON COLUMN crawl.tasks.outcome IS 'How the task ended, the value SQL reads (the reason says it for people). done: an object fetched; done_end: a list walked to its end (the upstream said no more, or an empty page on a list that does not say); done_page_limit: a list cut by its page limit (the pages past it never seen); done_stop_at_seen: a list cut by stop_at_seen at a page of entries earlier runs stored; done_guard: a list stopped by a loop guard (the cursor sent came back, an empty page claimed more, a cursor the crawler cannot follow); skipped_fresh: refresh_after found an earlier fetch fresh; skipped_adaptive: the adaptive schedule did not revisit it; skipped_budget: the adaptive schedule wanted it but the night''s credits left did not cover it (the second look may admit it once the frontier is done); skipped_unchanged: a content list whose parent page shows the counter of its last walk (crawl.content_walks), within its edge''s refresh_after; skipped_not_found: the upstream has no such item; skipped_retired: the endpoint is retired in the job''s dialect; failed: the upstream answered an error retries did not get past; failed_blocked: the platform blocks the item; failed_unstorable: the task or what it fetched cannot be stored (a key over the caps, a page the schema refuses, a kind this crawler does not know). NULL while pending or leased, but a task found again closer to a seed keeps its outcome until it ends again.';

-- +goose Down
-- An enum value cannot be dropped: skipped_unchanged rows become
-- skipped_fresh (nothing bought) and the value stays unused.
UPDATE crawl.tasks SET outcome = 'skipped_fresh' WHERE outcome = 'skipped_unchanged';
ALTER TABLE photosocial.comments DROP COLUMN IF EXISTS deleted_run;
ALTER TABLE shortvideo.comments DROP COLUMN IF EXISTS deleted_run;
DROP TABLE IF EXISTS crawl.content_walks;
