-- No silent drops: list entries the crawler could not store (null or not an
-- object, without their identifier, an identifier longer than the key cap)
-- are counted per task, in the same commit as the page's rows.
--
-- Reels: the code is not a key. A reel may come without one, and the
-- upstream has been seen to send one code under two ids (id vs pk); a
-- unique code failed the whole search page on either.

-- +goose Up
ALTER TABLE crawl.tasks
    ADD COLUMN dropped     bigint NOT NULL DEFAULT 0 CHECK (dropped >= 0),
    ADD COLUMN drop_reason text;
COMMENT ON COLUMN crawl.tasks.dropped IS 'List entries received but not stored: null or not an object, without their identifier, or an identifier longer than the key cap (1000 bytes). Counted with each page''s commit.';
COMMENT ON COLUMN crawl.tasks.drop_reason IS 'Why the latest dropped entry was dropped, e.g. followers[3]: null entry.';

ALTER TABLE photosocial.reels DROP CONSTRAINT reels_code_key;
ALTER TABLE photosocial.reels ALTER COLUMN code DROP NOT NULL;
CREATE INDEX reels_code_idx ON photosocial.reels (code) WHERE code IS NOT NULL;
COMMENT ON COLUMN photosocial.reels.code IS 'The reel''s shortcode (code), as in its URL /reel/<code>/; matches comments.post_code and transcripts.shortcode. NULL when the upstream sent none; not unique (the upstream has sent one code under two ids).';

-- +goose Down
DROP INDEX photosocial.reels_code_idx;
DELETE FROM photosocial.reel_search_results s USING photosocial.reels r WHERE s.reel_id = r.reel_id AND r.code IS NULL;
DELETE FROM photosocial.reel_snapshots s USING photosocial.reels r WHERE s.reel_id = r.reel_id AND r.code IS NULL;
DELETE FROM photosocial.reels WHERE code IS NULL;
ALTER TABLE photosocial.reels ALTER COLUMN code SET NOT NULL;
ALTER TABLE photosocial.reels ADD CONSTRAINT reels_code_key UNIQUE (code);
ALTER TABLE crawl.tasks DROP COLUMN drop_reason, DROP COLUMN dropped;
