-- Seed lists from files (docs/seed-files.md): a run whose job has seed
-- files is created with its inline seeds and seeds_pending; its file seeds
-- then go in batches, each committed with how far the files were read,
-- so a seeding that was killed continues from there instead of starting
-- over. A run is not done while seeds_pending.

-- +goose Up
ALTER TABLE crawl.runs
    ADD COLUMN seeds_pending boolean NOT NULL DEFAULT false,
    ADD COLUMN seed_file     integer NOT NULL DEFAULT 0,
    ADD COLUMN seed_offset   bigint  NOT NULL DEFAULT 0;
COMMENT ON COLUMN crawl.runs.seeds_pending IS 'True while values of the job''s seed files (the X_file keys) remain to be added to crawl.tasks; false once all are, and for jobs without seed files.';
COMMENT ON COLUMN crawl.runs.seed_file IS 'While seeds_pending: the seed file being seeded, by its index in the job''s seed files (in the order of the seed lists).';
COMMENT ON COLUMN crawl.runs.seed_offset IS 'While seeds_pending: the byte offset in seed_file up to which every value''s tasks are in crawl.tasks; seeding goes on from there.';

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN seeds_pending, DROP COLUMN seed_file, DROP COLUMN seed_offset;
