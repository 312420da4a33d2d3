package sinks

// PSTranscript is an entry of a media transcript.
type PSTranscript struct {
	Shortcode string  `db:"shortcode"` // the entry's shortcode (else PostCode(MediaURL))
	EntryID   string  `db:"entry_id"`  // the entry's id
	Text      *string `db:"text"`      // nil when the API sent null (no speech); never erases a stored text
	MediaURL  string  `db:"media_url"` // the URL as sent
	Raw       []byte  `db:"raw"`
}

// PSTranscriptCheck records that a media's transcript was asked for, with or
// without an answer: write one for every transcript response, so media
// without speech (an empty list) is known to be checked.
type PSTranscriptCheck struct {
	Shortcode  string `db:"shortcode"`   // PostCode(MediaURL)
	MediaURL   string `db:"media_url"`   // the URL as sent
	HasSpeech  bool   `db:"has_speech"`  // some entry had text
	EntryCount int    `db:"entry_count"` // entries in the answer
}

var _ = upsert("photosocial.transcripts", 215, "UpsertPSTranscripts", func(r PSTranscript) string { return r.Shortcode + "\x00" + r.EntryID }, nil)

var _ = upsert("photosocial.transcript_checks", 216, "UpsertPSTranscriptChecks", func(r PSTranscriptCheck) string { return r.Shortcode }, nil)
