-- Seeding a run from its job's seed files (package pipeline, seedfiles.go).

-- name: MarkSeedsPending
UPDATE crawl.runs SET seeds_pending = true, seed_file = 0, seed_offset = 0 WHERE id = @run_id;

-- name: SeedProgress
SELECT seeds_pending, seed_file, seed_offset, coalesce(fingerprint, '') FROM crawl.runs WHERE id = @run_id;

-- name: LockSeedProgress
-- Taken by each batch: processes seeding one run take turns, each going
-- on from where the last batch ended.
SELECT seeds_pending, seed_file, seed_offset FROM crawl.runs WHERE id = @run_id FOR UPDATE;

-- name: SetSeedProgress
UPDATE crawl.runs SET seeds_pending = @pending, seed_file = @file, seed_offset = @offset WHERE id = @run_id;
