package frontier

import (
	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"

	"github.com/socialcrawl/crawler/internal/db"
)

// The page archive (job file `archive: true`): the client hands every body
// that decoded to the page's lease, which keeps it, compressed
// (NewArchivedPage), and its commit batch writes it to crawl.pages with
// the page's place in its task, in the same round trip as its rows. Replay
// (runs/replay.go) maps these bodies again through the same kinds.

// ArchivedPage is one fetched body to keep: the request it answered and the
// body, zstd-compressed.
type ArchivedPage struct {
	Endpoint string // e.g. /shortvideo/user/followers
	Query    string // as sent
	Body     []byte // zstd
	Size     int    // uncompressed bytes
}

// NewArchivedPage is body, the answer to endpoint?query, compressed.
func NewArchivedPage(endpoint, query string, body []byte) *ArchivedPage {
	return &ArchivedPage{Endpoint: endpoint, Query: query, Body: zenc.EncodeAll(body, nil), Size: len(body)}
}

type archivePageParams struct {
	RunID     int64  `db:"run_id"`
	TaskID    int64  `db:"task_id"`
	Page      int    `db:"page"`
	Cursor    string `db:"cursor"`
	Items     int    `db:"items"`
	Endpoint  string `db:"endpoint"`
	Query     string `db:"query"`
	Body      []byte `db:"body"`
	BodyBytes int    `db:"body_bytes"`
}

var archivePage = db.Prepare[archivePageParams]("ArchivePage")

// queueArchive adds the statement archiving p, the page of t being
// committed, to batch.
func queueArchive(batch *pgx.Batch, runID int64, t *Task, p *ArchivedPage) {
	archivePage.Queue(batch, archivePageParams{RunID: runID, TaskID: t.ID, Page: t.Pages, Cursor: t.Cursor, Items: t.Items,
		Endpoint: p.Endpoint, Query: p.Query, Body: p.Body, BodyBytes: p.Size})
}

// zenc is safe for concurrent EncodeAll.
var zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
