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
	PostCode          string  `db:"post_code"`  // PostCode(PostURL)
	PostURL           string  `db:"post_url"`   // the post URL as sent
	CommentID         *string `db:"comment_id"` // the platform's id, when the answer carries one
	Username          string  `db:"username"`   // user.username
	Text              string  `db:"text"`
	CreatedAt         int64   `db:"created_at"` // created_at, unix seconds
	LikeCount         *int64  `db:"like_count"`
	ChildCommentCount *int64  `db:"child_comment_count"` // nil when the API sent null
	ParentID          *string `db:"parent_comment_id"`   // the comment replied to (include_replies)
	Raw               []byte  `db:"raw"`
}

var upsertPSComments = prepare[keyedComment]("UpsertPSComments")

// keyedComment is a comment with its CommentKey.
type keyedComment struct {
	Key string `db:"comment_key"`
	PSComment
}

var _ = register("photosocial.comments", 212, writePSComments)

func writePSComments(batch *pgx.Batch, runID int64, rows []PSComment) int {
	keyed := make([]keyedComment, len(rows))
	for i, r := range rows {
		keyed[i] = keyedComment{CommentKey(r.PostCode, r.Username, r.CreatedAt, r.Text), r}
	}
	keyed = dedupe(keyed, func(r keyedComment) string { return r.Key }, nil)
	return queue(batch, upsertPSComments, runID, keyed)
}
