package sinks

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// CommentKey identifies a comment, which the contract gives no id: the hex
// SHA-256 of its post's code, its author, its creation time (unix seconds)
// and its text, each prefixed with its length (uvarint) so no two different
// tuples hash the same bytes. The same comment seen through any URL form of
// its post, on any page or run, gets the same key; an edited text is a new
// comment.
func CommentKey(postCode, username string, createdAt int64, text string) string {
	h := sha256.New()
	var buf []byte
	for _, f := range [...]string{postCode, username, strconv.FormatInt(createdAt, 10), text} {
		buf = binary.AppendUvarint(buf[:0], uint64(len(f)))
		buf = append(buf, f...)
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PostCode is the shortcode of a post or reel URL: the path segment after
// p, reel, reels or tv ("https://host/p/ABC123/?igsh=x" -> "ABC123"), or ""
// when the URL has none. Host and query are ignored, so the forms of one post
// give one code.
func PostCode(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	segs := strings.Split(u.Path, "/")
	for i := 0; i+1 < len(segs); i++ {
		switch segs[i] {
		case "p", "reel", "reels", "tv":
			if segs[i+1] != "" {
				return segs[i+1]
			}
		}
	}
	return ""
}

// PSComment is a comment of a post. Its key is CommentKey(PostCode, Username,
// CreatedAt, Text), computed by Write.
type PSComment struct {
	PostCode          string  // PostCode(PostURL)
	PostURL           string  // the post URL as sent
	CommentID         *string // the platform's id, when the answer carries one
	Username          string  // user.username
	Text              string
	CreatedAt         int64 // created_at, unix seconds
	LikeCount         *int64
	ChildCommentCount *int64 // nil when the API sent null
	Raw               []byte
}

const upsertPSComments = `
INSERT INTO photosocial.comments AS c (comment_key, comment_id, post_code, post_url, username, text, created_at,
    like_count, child_comment_count, raw, first_seen_run, last_seen_run)
SELECT r.comment_key, r.comment_id, r.post_code, r.post_url, r.username, r.text,
    to_timestamp(NULLIF(r.created_at, 0)), r.like_count, r.child_comment_count, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[],
    $10::bigint[], $11::text[])
    AS r(comment_key, comment_id, post_code, post_url, username, text, created_at, like_count,
         child_comment_count, raw)
ON CONFLICT (comment_key) DO UPDATE SET
    comment_id          = COALESCE(EXCLUDED.comment_id, c.comment_id),
    post_url            = EXCLUDED.post_url,
    like_count          = COALESCE(EXCLUDED.like_count, c.like_count),
    child_comment_count = COALESCE(EXCLUDED.child_comment_count, c.child_comment_count),
    raw                 = EXCLUDED.raw,
    first_seen_run      = LEAST(c.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run       = GREATEST(c.last_seen_run, EXCLUDED.last_seen_run),
    updated_at          = now()
WHERE (c.comment_id, c.post_url, c.like_count, c.child_comment_count, c.raw, c.first_seen_run, c.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.comment_id, c.comment_id), EXCLUDED.post_url, COALESCE(EXCLUDED.like_count, c.like_count),
       COALESCE(EXCLUDED.child_comment_count, c.child_comment_count), EXCLUDED.raw,
       LEAST(c.first_seen_run, EXCLUDED.first_seen_run), GREATEST(c.last_seen_run, EXCLUDED.last_seen_run))`

type keyedComment struct {
	key string
	PSComment
}

func writePSComments(batch *pgx.Batch, runID int64, rows []PSComment) {
	if len(rows) == 0 {
		return
	}
	keyed := make([]keyedComment, len(rows))
	for i, r := range rows {
		keyed[i] = keyedComment{CommentKey(r.PostCode, r.Username, r.CreatedAt, r.Text), r}
	}
	keyed = dedupe(keyed, func(r keyedComment) string { return r.key }, nil)
	n := len(keyed)
	keys, ids, codes, urls, users, texts := make([]string, n), make([]*string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	created, likes, children, raws := make([]int64, n), make([]*int64, n), make([]*int64, n), make([]string, n)
	for i, r := range keyed {
		keys[i], ids[i], codes[i], urls[i], users[i], texts[i] = r.key, r.CommentID, r.PostCode, r.PostURL, r.Username, r.Text
		created[i], likes[i], children[i], raws[i] = r.CreatedAt, r.LikeCount, r.ChildCommentCount, string(r.Raw)
	}
	batch.Queue(upsertPSComments, runID, keys, ids, codes, urls, users, texts, created, likes, children, raws)
}
