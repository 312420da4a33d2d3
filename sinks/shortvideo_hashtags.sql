-- Bulk upserts of shortvideo_hashtags.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVHashtags
INSERT INTO shortvideo.hashtags AS h (name, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.name, r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@name::text[], @raw_partial::boolean[], @raw::text[]) AS r(name, raw_partial, raw)
-- from: NewestRunWins as=h key=name set= raw_partial=yes

-- name: UpsertSVHashtagSnapshots
INSERT INTO shortvideo.hashtag_snapshots AS s (name, run_id, view_count, video_count, growth)
SELECT r.name, @run_id, r.view_count, r.video_count, NULLIF(NULLIF(r.growth, ''), 'null')::jsonb
FROM unnest(@name::text[], @view_count::bigint[], @video_count::bigint[], @growth::text[]) AS r(name, view_count, video_count, growth)
-- from: RunSnapshot as=s key=name,run_id set=view_count,video_count,growth fill=all

-- name: UpsertSVVideoHashtags
-- from: ListEntry table=shortvideo.video_hashtags owner=video_id entry=name
