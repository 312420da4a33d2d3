-- A follower page (50 list entries: 50 users rows and 50 follows edges) is
-- most of what a crawl writes, and PostgreSQL's CPU per page limits how fast
-- the crawler goes. Measured on tables of 1,000,000 rows (bench workload
-- dbcost, and the writer alone): of about 1.65 s of server CPU per 1000
-- pages of rows, the two foreign keys of shortvideo.follows took 0.55 s (an
-- SPI lookup and a KEY SHARE row lock in shortvideo.users per end per edge:
-- 100 per page) and users_sec_uid_idx 0.17 s (every list entry carries a
-- secUid). Neither guards anything the writer does not already guarantee,
-- and no query of the crawler or of the analyst views uses the index.
--
-- The follows edges keep both ends in shortvideo.users by construction, as
-- the run id columns do since 00006: the entry's users row is upserted by
-- the statement before the edges in the same transaction (sinks writes
-- shortvideo.users first), and the list's owner has its row from the
-- profile page that queued the list (or the secuid: stub its first page
-- writes). A follows row is never written by anything else.

-- +goose Up
ALTER TABLE shortvideo.follows DROP CONSTRAINT follows_follower_fkey;
ALTER TABLE shortvideo.follows DROP CONSTRAINT follows_followee_fkey;
DROP INDEX shortvideo.users_sec_uid_idx;

COMMENT ON COLUMN shortvideo.follows.follower IS 'The account that follows; join shortvideo.users.unique_id (always present: the writer writes the account with the edge; no foreign key since 00015, for speed).';
COMMENT ON COLUMN shortvideo.follows.followee IS 'The account followed; join shortvideo.users.unique_id (always present: the writer writes the account with the edge; no foreign key since 00015, for speed).';
COMMENT ON COLUMN shortvideo.users.sec_uid IS 'The account''s secUid, once known. Not indexed (since 00015): no query of the crawler looks accounts up by it; an analyst who does can add CREATE INDEX ON shortvideo.users (sec_uid).';

-- +goose Down
CREATE INDEX users_sec_uid_idx ON shortvideo.users (sec_uid) WHERE sec_uid IS NOT NULL;
ALTER TABLE shortvideo.follows ADD CONSTRAINT follows_follower_fkey FOREIGN KEY (follower) REFERENCES shortvideo.users (unique_id);
ALTER TABLE shortvideo.follows ADD CONSTRAINT follows_followee_fkey FOREIGN KEY (followee) REFERENCES shortvideo.users (unique_id);
COMMENT ON COLUMN shortvideo.follows.follower IS 'The account that follows (shortvideo.users).';
COMMENT ON COLUMN shortvideo.follows.followee IS 'The account followed (shortvideo.users).';
COMMENT ON COLUMN shortvideo.users.sec_uid IS 'The account''s secUid, once known.';
