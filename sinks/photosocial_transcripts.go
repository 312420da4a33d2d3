package sinks

import "github.com/jackc/pgx/v5"

// PSTranscript is an entry of a media transcript.
type PSTranscript struct {
	Shortcode string  // the entry's shortcode (else PostCode(MediaURL))
	EntryID   string  // the entry's id
	Text      *string // nil when the API sent null (no speech); never erases a stored text
	MediaURL  string  // the URL as sent
	Raw       []byte
}

// PSTranscriptCheck records that a media's transcript was asked for, with or
// without an answer: write one for every transcript response, so media
// without speech (an empty list) is known to be checked.
type PSTranscriptCheck struct {
	Shortcode  string // PostCode(MediaURL)
	MediaURL   string // the URL as sent
	HasSpeech  bool   // some entry had text
	EntryCount int    // entries in the answer
}

const upsertPSTranscripts = `
INSERT INTO photosocial.transcripts AS t (shortcode, entry_id, text, media_url, raw, first_seen_run, last_seen_run)
SELECT r.shortcode, r.entry_id, r.text, r.media_url, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS r(shortcode, entry_id, text, media_url, raw)
ON CONFLICT (shortcode, entry_id) DO UPDATE SET
    text           = COALESCE(EXCLUDED.text, t.text),
    media_url      = EXCLUDED.media_url,
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(t.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(t.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (t.text, t.media_url, t.raw, t.first_seen_run, t.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.text, t.text), EXCLUDED.media_url, EXCLUDED.raw,
       LEAST(t.first_seen_run, EXCLUDED.first_seen_run), GREATEST(t.last_seen_run, EXCLUDED.last_seen_run))`

func writePSTranscripts(batch *pgx.Batch, runID int64, rows []PSTranscript) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSTranscript) string { return r.Shortcode + "\x00" + r.EntryID }, nil)
	n := len(rows)
	codes, ids, texts, urls, raws := make([]string, n), make([]string, n), make([]*string, n), make([]string, n), make([]string, n)
	for i, r := range rows {
		codes[i], ids[i], texts[i], urls[i], raws[i] = r.Shortcode, r.EntryID, r.Text, r.MediaURL, string(r.Raw)
	}
	batch.Queue(upsertPSTranscripts, runID, codes, ids, texts, urls, raws)
}

const upsertPSTranscriptChecks = `
INSERT INTO photosocial.transcript_checks AS c (shortcode, media_url, has_speech, entry_count,
    first_checked_run, last_checked_run)
SELECT r.shortcode, r.media_url, r.has_speech, r.entry_count, $1, $1
FROM unnest($2::text[], $3::text[], $4::boolean[], $5::integer[]) AS r(shortcode, media_url, has_speech, entry_count)
ON CONFLICT (shortcode) DO UPDATE SET
    media_url         = EXCLUDED.media_url,
    has_speech        = EXCLUDED.has_speech,
    entry_count       = EXCLUDED.entry_count,
    first_checked_run = LEAST(c.first_checked_run, EXCLUDED.first_checked_run),
    last_checked_run  = GREATEST(c.last_checked_run, EXCLUDED.last_checked_run),
    updated_at        = now()
WHERE (c.media_url, c.has_speech, c.entry_count, c.first_checked_run, c.last_checked_run)
  IS DISTINCT FROM
      (EXCLUDED.media_url, EXCLUDED.has_speech, EXCLUDED.entry_count,
       LEAST(c.first_checked_run, EXCLUDED.first_checked_run), GREATEST(c.last_checked_run, EXCLUDED.last_checked_run))`

func writePSTranscriptChecks(batch *pgx.Batch, runID int64, rows []PSTranscriptCheck) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSTranscriptCheck) string { return r.Shortcode }, nil)
	n := len(rows)
	codes, urls, speech, counts := make([]string, n), make([]string, n), make([]bool, n), make([]int, n)
	for i, r := range rows {
		codes[i], urls[i], speech[i], counts[i] = r.Shortcode, r.MediaURL, r.HasSpeech, r.EntryCount
	}
	batch.Queue(upsertPSTranscriptChecks, runID, codes, urls, speech, counts)
}
