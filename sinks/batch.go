package sinks

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
)

// Batch is the set of rows one page produced. Rows that reference another row
// by foreign key (snapshots, search results, feed entries, links) need that
// row in the same batch or already stored; see the migrations for which
// references have one.
type Batch struct {
	// Short-video platform (schema shortvideo).
	SVUsers            []SVUser
	SVSnapshots        []SVUserSnapshot
	SVFollows          []SVFollow
	SVVideos           []SVVideo
	SVVideoSnapshots   []SVVideoSnapshot
	SVHashtags         []SVHashtag
	SVHashtagSnapshots []SVHashtagSnapshot
	SVSongs            []SVSong
	SVSongSnapshots    []SVSongSnapshot
	SVSongVideos       []SVSongVideo
	SVSearchResults    []SVSearchResult
	SVFeedEntries      []SVFeedEntry
	SVPopularCreators  []SVPopularCreator
	SVLiveStatuses     []SVLiveStatus

	// Photo-sharing platform (schema photosocial).
	PSUsers             []PSUser
	PSProfileSnapshots  []PSProfileSnapshot
	PSComments          []PSComment
	PSReels             []PSReel
	PSReelSnapshots     []PSReelSnapshot
	PSReelSearchResults []PSReelSearchResult
	PSTranscripts       []PSTranscript
	PSTranscriptChecks  []PSTranscriptCheck
	PSEmbeds            []PSEmbed
	PSHighlights        []PSHighlight
	PSHighlightItems    []PSHighlightItem
}

// table queues the statement writing one table's rows of a batch. Writers
// only queue: Queue collects their statements into one pgx.Batch, so a page
// costs one round trip however many tables it touches.
type table struct {
	name  string
	len   func(b *Batch) int
	write func(batch *pgx.Batch, runID int64, b *Batch)
}

func tableOf[T any](name string, rows func(b *Batch) []T, write func(*pgx.Batch, int64, []T)) table {
	return table{
		name:  name,
		len:   func(b *Batch) int { return len(rows(b)) },
		write: func(batch *pgx.Batch, runID int64, b *Batch) { write(batch, runID, rows(b)) },
	}
}

// tables is the write order: every table after the tables its foreign keys
// point at. The order is the same for every worker, and rows are sorted by
// key within a table, so concurrent writers lock rows in one global order.
var tables = []table{
	tableOf("shortvideo.users", func(b *Batch) []SVUser { return b.SVUsers }, writeSVUsers),
	tableOf("shortvideo.videos", func(b *Batch) []SVVideo { return b.SVVideos }, writeSVVideos),
	tableOf("shortvideo.hashtags", func(b *Batch) []SVHashtag { return b.SVHashtags }, writeSVHashtags),
	tableOf("shortvideo.songs", func(b *Batch) []SVSong { return b.SVSongs }, writeSVSongs),
	tableOf("shortvideo.user_snapshots", func(b *Batch) []SVUserSnapshot { return b.SVSnapshots }, writeSVSnapshots),
	tableOf("shortvideo.follows", func(b *Batch) []SVFollow { return b.SVFollows }, writeSVFollows),
	tableOf("shortvideo.video_snapshots", func(b *Batch) []SVVideoSnapshot { return b.SVVideoSnapshots }, writeSVVideoSnapshots),
	tableOf("shortvideo.hashtag_snapshots", func(b *Batch) []SVHashtagSnapshot { return b.SVHashtagSnapshots }, writeSVHashtagSnapshots),
	tableOf("shortvideo.song_snapshots", func(b *Batch) []SVSongSnapshot { return b.SVSongSnapshots }, writeSVSongSnapshots),
	tableOf("shortvideo.song_videos", func(b *Batch) []SVSongVideo { return b.SVSongVideos }, writeSVSongVideos),
	tableOf("shortvideo.search_results", func(b *Batch) []SVSearchResult { return b.SVSearchResults }, writeSVSearchResults),
	tableOf("shortvideo.feed_entries", func(b *Batch) []SVFeedEntry { return b.SVFeedEntries }, writeSVFeedEntries),
	tableOf("shortvideo.popular_creators", func(b *Batch) []SVPopularCreator { return b.SVPopularCreators }, writeSVPopularCreators),
	tableOf("shortvideo.live_status", func(b *Batch) []SVLiveStatus { return b.SVLiveStatuses }, writeSVLiveStatuses),

	tableOf("photosocial.profiles", func(b *Batch) []PSUser { return b.PSUsers }, writePSProfiles),
	tableOf("photosocial.reels", func(b *Batch) []PSReel { return b.PSReels }, writePSReels),
	tableOf("photosocial.highlights", func(b *Batch) []PSHighlight { return b.PSHighlights }, writePSHighlights),
	tableOf("photosocial.profile_snapshots", func(b *Batch) []PSProfileSnapshot { return b.PSProfileSnapshots }, writePSProfileSnapshots),
	tableOf("photosocial.comments", func(b *Batch) []PSComment { return b.PSComments }, writePSComments),
	tableOf("photosocial.reel_snapshots", func(b *Batch) []PSReelSnapshot { return b.PSReelSnapshots }, writePSReelSnapshots),
	tableOf("photosocial.reel_search_results", func(b *Batch) []PSReelSearchResult { return b.PSReelSearchResults }, writePSReelSearchResults),
	tableOf("photosocial.transcripts", func(b *Batch) []PSTranscript { return b.PSTranscripts }, writePSTranscripts),
	tableOf("photosocial.transcript_checks", func(b *Batch) []PSTranscriptCheck { return b.PSTranscriptChecks }, writePSTranscriptChecks),
	tableOf("photosocial.embeds", func(b *Batch) []PSEmbed { return b.PSEmbeds }, writePSEmbeds),
	tableOf("photosocial.highlight_items", func(b *Batch) []PSHighlightItem { return b.PSHighlightItems }, writePSHighlightItems),
}

// runParams are the scalar parameters of every upsert: the run writing.
type runParams struct {
	RunID int64 `db:"run_id"`
}

// queue appends the upsert of rows by run runID to batch; the statement's
// arrays are built from the rows' db-tagged fields.
func queue[R any](batch *pgx.Batch, stmt db.Bulk[runParams, R], runID int64, rows []R) {
	if len(rows) == 0 {
		return
	}
	stmt.Queue(batch, runParams{RunID: runID}, rows)
}

// Len is the number of rows in the batch.
func (b *Batch) Len() int {
	n := 0
	for _, t := range tables {
		n += t.len(b)
	}
	return n
}

// Queue appends the statements that apply b for run runID to batch, parents
// before children, and returns what each statement writes ("write
// shortvideo.users"), in order, for Results.
func Queue(batch *pgx.Batch, runID int64, b *Batch) []string {
	var labels []string
	for _, t := range tables {
		if t.len(b) == 0 {
			continue
		}
		t.write(batch, runID, b)
		labels = append(labels, "write "+t.name)
	}
	return labels
}

// Results reads the results of the statements labels names from br, in
// order, and returns the first error with its label.
func Results(br pgx.BatchResults, labels []string) error {
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", l, err)
		}
	}
	return nil
}
