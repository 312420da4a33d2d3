-- Commands that cost the same after a year of nightly runs as after one
-- (bench workload 15, "history"): what they read is the current run or a
-- bounded window, through an index, never every run of the job.
--
-- * crawl.runs.entries_per_page and credits_saved: a run's summary of its
--   tasks, written when a process finishes the run (FinishRun) or it is
--   abandoned, cleared when it is continued or joined. `crawler plan`'s
--   observed page size and `crawler runs`' credits saved read it instead
--   of every task of every run; a run without one (running, or killed)
--   is still read from its tasks. Finished runs are summarized here once.
-- * an index on last_seen_run of every entity table: the run report
--   counts the rows a run saw (first or last) from the rows last seen by
--   it or a later run, not by a scan of the table.
-- * shortvideo.user_snapshots by run (as 00019 makes it, if not there).
--
-- NO TRANSACTION: CREATE INDEX CONCURRENTLY builds an index without
-- blocking writers and cannot run inside a transaction. Every statement is
-- idempotent, so an interrupted migration is applied again whole; an
-- interrupted concurrent build leaves an INVALID index that IF NOT EXISTS
-- would take for done, so such leftovers are dropped first.

-- +goose NO TRANSACTION

-- +goose Up
ALTER TABLE crawl.runs ADD COLUMN IF NOT EXISTS entries_per_page bigint;
COMMENT ON COLUMN crawl.runs.entries_per_page IS 'Summary of the run''s tasks for crawler plan: the largest average page (entries per page, rounded up) of its lists that walked more than one page, 0 when none did. Written when a process finishes the run or it is abandoned; NULL while it runs (read from its tasks then).';
ALTER TABLE crawl.runs ADD COLUMN IF NOT EXISTS credits_saved bigint;
COMMENT ON COLUMN crawl.runs.credits_saved IS 'Summary of the run''s tasks for crawler runs: the sum of their credits_saved (as crawl.run_ledger.credits_saved). Written when a process finishes the run or it is abandoned; NULL while it runs (read from its tasks then).';

UPDATE crawl.runs r SET entries_per_page = s.entries_per_page, credits_saved = s.credits_saved
FROM (SELECT run_id, coalesce(max(ceil(items::numeric / pages)) FILTER (WHERE pages > 1), 0)::bigint AS entries_per_page,
             coalesce(sum(credits_saved), 0)::bigint AS credits_saved
      FROM crawl.tasks GROUP BY run_id) s
WHERE s.run_id = r.id AND r.state <> 'running' AND r.entries_per_page IS NULL;

-- +goose StatementBegin
DO $$
DECLARE i text;
BEGIN
    FOREACH i IN ARRAY ARRAY['shortvideo.user_snapshots_run_idx',
        'shortvideo.users_last_seen_run_idx', 'shortvideo.follows_last_seen_run_idx', 'shortvideo.videos_last_seen_run_idx',
        'shortvideo.hashtags_last_seen_run_idx', 'shortvideo.songs_last_seen_run_idx', 'shortvideo.song_videos_last_seen_run_idx',
        'photosocial.profiles_last_seen_run_idx', 'photosocial.comments_last_seen_run_idx', 'photosocial.reels_last_seen_run_idx',
        'photosocial.transcripts_last_seen_run_idx', 'photosocial.embeds_last_seen_run_idx', 'photosocial.highlights_last_seen_run_idx',
        'photosocial.highlight_items_last_seen_run_idx']
    LOOP
        IF EXISTS (SELECT 1 FROM pg_index x WHERE NOT x.indisvalid AND x.indexrelid = to_regclass(i)) THEN
            EXECUTE 'DROP INDEX ' || i;
        END IF;
    END LOOP;
END $$;
-- +goose StatementEnd

CREATE INDEX CONCURRENTLY IF NOT EXISTS user_snapshots_run_idx ON shortvideo.user_snapshots (run_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_last_seen_run_idx ON shortvideo.users (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS follows_last_seen_run_idx ON shortvideo.follows (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS videos_last_seen_run_idx ON shortvideo.videos (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS hashtags_last_seen_run_idx ON shortvideo.hashtags (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS songs_last_seen_run_idx ON shortvideo.songs (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS song_videos_last_seen_run_idx ON shortvideo.song_videos (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS profiles_last_seen_run_idx ON photosocial.profiles (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS comments_last_seen_run_idx ON photosocial.comments (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS reels_last_seen_run_idx ON photosocial.reels (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS transcripts_last_seen_run_idx ON photosocial.transcripts (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS embeds_last_seen_run_idx ON photosocial.embeds (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS highlights_last_seen_run_idx ON photosocial.highlights (last_seen_run);
CREATE INDEX CONCURRENTLY IF NOT EXISTS highlight_items_last_seen_run_idx ON photosocial.highlight_items (last_seen_run);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS photosocial.highlight_items_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS photosocial.highlights_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS photosocial.embeds_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS photosocial.transcripts_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS photosocial.reels_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS photosocial.comments_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS photosocial.profiles_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.song_videos_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.songs_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.hashtags_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.videos_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.follows_last_seen_run_idx;
DROP INDEX CONCURRENTLY IF EXISTS shortvideo.users_last_seen_run_idx;
ALTER TABLE crawl.runs DROP COLUMN IF EXISTS credits_saved;
ALTER TABLE crawl.runs DROP COLUMN IF EXISTS entries_per_page;
