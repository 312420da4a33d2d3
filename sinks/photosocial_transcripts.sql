-- Bulk upserts of photosocial_transcripts.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSTranscripts
INSERT INTO photosocial.transcripts AS t (shortcode, entry_id, text, media_url, raw, first_seen_run, last_seen_run)
SELECT r.shortcode, r.entry_id, r.text, r.media_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@shortcode::text[], @entry_id::text[], @text::text[], @media_url::text[], @raw::text[]) AS r(shortcode, entry_id, text, media_url, raw)
-- from: NewestRunWins as=t key=shortcode,entry_id set=text,media_url,raw fill=text

-- name: UpsertPSTranscriptChecks
INSERT INTO photosocial.transcript_checks AS c (shortcode, media_url, has_speech, entry_count,
    first_checked_run, last_checked_run)
SELECT r.shortcode, r.media_url, r.has_speech, r.entry_count, @run_id, @run_id
FROM unnest(@shortcode::text[], @media_url::text[], @has_speech::boolean[], @entry_count::integer[]) AS r(shortcode, media_url, has_speech, entry_count)
ON CONFLICT (shortcode) DO UPDATE SET
    media_url         = CASE WHEN EXCLUDED.last_checked_run >= c.last_checked_run THEN EXCLUDED.media_url ELSE c.media_url END,
    has_speech        = CASE WHEN EXCLUDED.last_checked_run >= c.last_checked_run THEN EXCLUDED.has_speech ELSE c.has_speech END,
    entry_count       = CASE WHEN EXCLUDED.last_checked_run >= c.last_checked_run THEN EXCLUDED.entry_count ELSE c.entry_count END,
    first_checked_run = LEAST(c.first_checked_run, EXCLUDED.first_checked_run),
    last_checked_run  = GREATEST(c.last_checked_run, EXCLUDED.last_checked_run),
    updated_at        = now()
WHERE CASE WHEN EXCLUDED.last_checked_run >= c.last_checked_run
    THEN (c.media_url, c.has_speech, c.entry_count, c.first_checked_run, c.last_checked_run)
         IS DISTINCT FROM
         (EXCLUDED.media_url, EXCLUDED.has_speech, EXCLUDED.entry_count,
          LEAST(c.first_checked_run, EXCLUDED.first_checked_run), GREATEST(c.last_checked_run, EXCLUDED.last_checked_run))
    -- An older run (a replay) changes only first_checked_run.
    ELSE c.first_checked_run IS DISTINCT FROM LEAST(c.first_checked_run, EXCLUDED.first_checked_run) END;
