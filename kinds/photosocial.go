package kinds

import (
	"fmt"
	"strconv"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// The photo-sharing platform's kinds, each declared once: its name (the
// constant), the seed list that starts it (a field of PhotoSocialSeeds
// named by its entry), its fetch and how a page maps to rows and child
// tasks.

// PhotoSocialSeeds are the seeds on the photo-sharing platform; the kind
// whose entry names a field's key validates its values and makes their
// tasks.
type PhotoSocialSeeds struct {
	Profiles      []string `yaml:"profiles" json:"profiles,omitempty"`
	Posts         []string `yaml:"posts" json:"posts,omitempty"`
	ReelsSearches []string `yaml:"reels_searches" json:"reels_searches,omitempty"`
	Transcripts   []string `yaml:"transcripts" json:"transcripts,omitempty"`
	Embeds        []string `yaml:"embeds" json:"embeds,omitempty"`
	Highlights    []string `yaml:"highlights" json:"highlights,omitempty"`
	Media         []string `yaml:"media" json:"media,omitempty"`
}

// KindPSProfile: a deep profile; key: handle.
const KindPSProfile = "photosocial.profile"

var _ = register(&Kind{
	Name:  KindPSProfile,
	Seeds: seedsOf("seeds.photosocial.profiles", checkHandle, handleTasks),
	Call:  byKey(endpoints.PSProfileCall, mapPSProfile),
	Fresh: &FreshRule{Expand: storedPSProfile},
})

func mapPSProfile(m *mapper, t *Task, p *endpoints.PSProfile) (*Result, error) {
	if p.Empty {
		// The documented answer for a private account: empty and free.
		return &Result{Stop: "done: private account (empty answer, not charged)"}, nil
	}
	name := string(p.Username)
	if name == "" {
		name = t.Key
	}
	if err := checkObjectKeys("photosocial/profile", "user.username", name, "user.id", string(p.ID)); err != nil {
		return nil, err
	}
	res := &Result{Stop: StopDone, Items: 1}
	sinks.Add(&res.Batch, sinks.PSUser{
		Username: name, UserID: textPtr(p.ID), FullName: textPtr(p.FullName), Biography: textPtr(p.Biography),
		ProfilePicURL: textPtr(p.PicURL), Private: flagPtr(p.IsPrivate), Verified: flagPtr(p.IsVerified), BusinessAccount: flagPtr(p.IsBusiness), Category: nullTextPtr(p.CategoryName),
		ContactEmail: nullTextPtr(p.Contact.Email), ContactPhone: nullTextPtr(p.Contact.Phone), ContactAddress: nullTextPtr(p.Contact.Address),
		Profile: true, Raw: p.Raw,
	})
	sinks.Add(&res.Batch, sinks.PSProfileSnapshot{
		Username: name, FollowerCount: intPtr(p.Followers), FollowingCount: intPtr(p.Following), PostCount: intPtr(p.Posts),
	})
	if p.IsPrivate.V {
		res.Stop = "done: private account, lists not fetched"
	} else {
		m.followPSLists(res, t, name)
	}
	return res, nil
}

// KindPSComments: a post's or reel's comments; key: its URL. A post seed
// is its comments.
const KindPSComments = "photosocial.comments"

var _ = register(&Kind{
	Name:  KindPSComments,
	List:  true,
	Pages: "comments",
	Seeds: seedsOf("seeds.photosocial.posts", checkPostURL, mediaTasks),
	Call:  byKeyCursor(endpoints.PSCommentsCall, mapPSComments),
	Change: &ChangeRule{Gone: func(t *Task) GoneScope {
		return GoneScope{Platform: "photosocial", Owner: sinks.PostCode(t.Key)}
	}, Expand: storedReplies(&storedPostCommentsWithReplies, func(t *Task) string { return sinks.PostCode(t.Key) }, edgePostCommentReplies),
		Explain: explainBy(&storedPSCommentCounts, func(t *Task) string { return sinks.PostCode(t.Key) }, psCounted(false))},
	Seen: seenBy(seenComments, func(t *Task) string { return sinks.PostCode(t.Key) }, func(r *Result) []string {
		rows := sinks.Rows[sinks.PSComment](&r.Batch)
		keys := make([]string, len(rows))
		for i, c := range rows {
			keys[i] = sinks.CommentKey(c.PostCode, c.Username, c.CreatedAt, c.Text)
		}
		return keys
	}),
	// Again from stored data: the replies of the comments its walk in this
	// run stored with replies beyond those shown.
	Reexpand: storedIDs(&runPostCommentsWithReplies, func(t *Task) string { return sinks.PostCode(t.Key) }, edgePostCommentReplies, urlParam),
})

func mapPSComments(m *mapper, t *Task, page *sources.Page[endpoints.PSComment]) (*Result, error) {
	res := listResult(t, page)
	code := sinks.PostCode(t.Key)
	for _, it := range page.Items {
		if !addPSComment(res, t.Key, code, it, "comments", nil) {
			continue
		}
		// Replies bought with the comment (include_replies) are comments
		// too, linked to it.
		for _, r := range it.V.Replies {
			addPSComment(res, t.Key, code, r, fmt.Sprintf("comments[%d].replies", it.Pos), textPtr(it.V.ID))
		}
		if it.V.RepliesDropped > 0 {
			res.Drops.N += it.V.RepliesDropped
			res.Drops.Reason = fmt.Sprintf("comments[%d].%s", it.Pos, it.V.RepliesDropReason)
		}
		// Replies beyond those the answer carries (three at most with
		// include_replies, none without) are their own list.
		if it.V.HasMoreReplies && it.V.ID != "" {
			m.followCounted(res, t, edgePostCommentReplies, string(it.V.ID), urlParam(t), it.V.ChildCommentCount)
		}
	}
	return res, nil
}

// addPSComment adds a comment (or a reply, with parent) of list on the
// post at postURL (its code), or counts it dropped with a reason; it
// reports whether it was added.
func addPSComment(res *Result, postURL, code string, it sources.Item[endpoints.PSComment], list string, parent *string) bool {
	v := it.V
	why := keyProblem(list, it.Pos, "user.username", string(v.Username))
	if err := sinks.CheckUnixTime("created_at", v.CreatedAt.V); why == "" && err != nil {
		why = fmt.Sprintf("%s[%d]: %v", list, it.Pos, err)
	}
	if why != "" {
		res.Drop(why)
		return false
	}
	if parent == nil {
		parent = textPtr(v.ParentID)
	}
	sinks.Add(&res.Batch, sinks.PSComment{
		PostCode: code, PostURL: postURL, CommentID: textPtr(v.ID), Username: string(v.Username), Text: string(v.Text),
		CreatedAt: v.CreatedAt.V, LikeCount: intPtr(v.LikeCount), ChildCommentCount: intPtr(v.ChildCommentCount), ParentID: parent, Raw: it.Raw,
	})
	return true
}

// KindPSReelsSearch: a reels search; key: the query; cursor: the next
// page number.
const KindPSReelsSearch = "photosocial.reels_search"

var _ = register(&Kind{
	Name:  KindPSReelsSearch,
	List:  true,
	Seeds: seedsOf("seeds.photosocial.reels_searches", checkSearch, searchTasks),
	Call: &endpoint[*sources.Page[endpoints.PSReel]]{
		early: func(t *Task) *Result {
			if _, ok := reelsPage(t); !ok {
				return &Result{Stop: "bad page cursor " + strconv.Quote(t.Cursor), Outcome: OutcomeDoneGuard}
			}
			return nil
		},
		call: func(t *Task) sources.Call[*sources.Page[endpoints.PSReel]] {
			n, _ := reelsPage(t)
			return endpoints.PSReelsSearchCall(t.Key, n)
		},
		mapTo: mapPSReelsSearch,
	},
	Reexpand: storedReelsSearch,
})

// reelsPage is the number of the reels search page t asks for next: its
// cursor, 1 at the start; ok is false for a cursor that is no page number.
func reelsPage(t *Task) (n int, ok bool) {
	if t.Cursor == "" {
		return 1, true
	}
	n, err := strconv.Atoi(t.Cursor)
	return n, err == nil && n >= 1
}

var mapPSReelsSearch = searchEntries(searchQueryKey, func(m *mapper, t *Task, res *Result, qk string, it sources.Item[endpoints.PSReel]) {
	if addPSReel(res, it, "reels") {
		sinks.Add(&res.Batch, sinks.PSReelSearchResult{QueryKey: qk, Rank: t.Items + it.Pos + 1, ReelID: string(it.V.ID)})
		m.followReel(res, t, string(it.V.URL), string(it.V.Code), it.V.CommentCount)
	}
})

// addPSReel adds a reel of list and its counters, or counts it dropped with
// a reason; it reports whether it was added.
func addPSReel(res *Result, it sources.Item[endpoints.PSReel], list string) bool {
	r := it.V
	id := string(r.ID)
	why := entryProblem(list, it.Pos, "id", id, "code", string(r.Code), "owner.username", string(r.OwnerUsername))
	if err := sinks.CheckUnixTime("taken_at", r.TakenAt.V); why == "" && err != nil {
		why = fmt.Sprintf("%s[%d]: %v", list, it.Pos, err)
	}
	if why != "" {
		res.Drop(why)
		return false
	}
	sinks.Add(&res.Batch, sinks.PSReel{
		ReelID: id, Code: string(r.Code), OwnerUsername: textPtr(r.OwnerUsername), Caption: textPtr(r.Caption), TakenAt: intPtr(r.TakenAt), Raw: it.Raw,
	})
	sinks.Add(&res.Batch, sinks.PSReelSnapshot{ReelID: id, PlayCount: intPtr(r.PlayCount), LikeCount: intPtr(r.LikeCount)})
	return true
}

// followReel adds a reel's comments and transcript tasks, keyed by its URL
// (mediaURL: on the host the answer's URL gives, else the dialect's web
// address; the contract's reels carry only a code).
func (m *mapper) followReel(res *Result, t *Task, reelURL, code string, count sources.Int64) {
	if code == "" {
		return
	}
	reelURL = m.mediaURL(reelURL, code, true)
	m.followCounted(res, t, edgeReelComments, reelURL, nil, count)
	m.follow(res, t, edgeReelTranscripts, reelURL, nil)
}

// KindPSTranscript: a post's or reel's transcript; key: its URL.
const KindPSTranscript = "photosocial.transcript"

var _ = register(&Kind{
	Name:  KindPSTranscript,
	Seeds: seedsOf("seeds.photosocial.transcripts", checkPostURL, mediaTasks),
	Call:  byKey(endpoints.PSTranscriptCall, mapPSTranscript),
	Fresh: &FreshRule{}, // nothing to expand
})

func mapPSTranscript(m *mapper, t *Task, tr *endpoints.PSTranscript) (*Result, error) {
	res := &Result{Stop: StopDone, Items: len(tr.Entries) + tr.Dropped, Drops: Drops{N: tr.Dropped, Reason: tr.DropReason}}
	code := sinks.PostCode(t.Key)
	if err := checkObjectKeys("photosocial/transcript", "shortcode", code); err != nil {
		return nil, err
	}
	speech := false
	stored := 0
	for _, it := range tr.Entries {
		e := it.V
		entryID := string(e.ID)
		if entryID == "" {
			entryID = strconv.Itoa(it.Pos + 1)
		}
		sc := string(e.Shortcode)
		if sc == "" {
			sc = code
		}
		if why := entryProblem("transcripts", it.Pos, "id", entryID, "shortcode", sc); why != "" {
			res.Drop(why)
			continue
		}
		stored++
		speech = speech || (e.Text.Valid && e.Text.V != "")
		sinks.Add(&res.Batch, sinks.PSTranscript{
			Shortcode: sc, EntryID: entryID, Text: nullTextPtr(e.Text), MediaURL: t.Key, Raw: it.Raw,
		})
	}
	sinks.Add(&res.Batch, sinks.PSTranscriptCheck{
		Shortcode: code, MediaURL: t.Key, HasSpeech: speech, EntryCount: stored,
	})
	if !speech {
		res.Stop = "done: no speech"
	}
	return res, nil
}

// KindPSEmbed: a profile's embed markup; key: handle.
const KindPSEmbed = "photosocial.embed"

var _ = register(&Kind{
	Name:  KindPSEmbed,
	Seeds: seedsOf("seeds.photosocial.embeds", checkHandle, handleTasks),
	Call:  byKey(endpoints.PSEmbedCall, mapPSEmbed),
	Fresh: &FreshRule{}, // nothing to expand
})

func mapPSEmbed(m *mapper, t *Task, e *endpoints.PSEmbed) (*Result, error) {
	res := &Result{Stop: StopDone, Items: 1}
	sinks.Add(&res.Batch, sinks.PSEmbed{Username: t.Key, HTML: textPtr(e.HTML), Raw: e.Raw})
	return res, nil
}

// KindPSHighlight: a highlight and its items; key: the id's digits.
const KindPSHighlight = "photosocial.highlight"

var _ = register(&Kind{
	Name: KindPSHighlight,
	Seeds: seedsOf("seeds.photosocial.highlights", quoted(func(v string) string {
		if len(v) > MaxNameBytes {
			return fmt.Sprintf("is %d bytes long; an id is at most %d", len(v), MaxNameBytes)
		}
		if _, err := endpoints.HighlightDigits(v); err != nil {
			return "is not a highlight id (digits, optionally after highlight:)"
		}
		return ""
	}), seedKey(func(v string) string {
		digits, _ := endpoints.HighlightDigits(v)
		return digits
	})),
	Call:  byKey(endpoints.PSHighlightCall, mapPSHighlight),
	Fresh: &FreshRule{}, // nothing to expand
})

func mapPSHighlight(m *mapper, t *Task, h *endpoints.PSHighlight) (*Result, error) {
	id := string(h.Digits)
	if id == "" {
		id = t.Key
	}
	if err := checkObjectKeys("photosocial/highlight", "id", id, "user.username", string(h.Username)); err != nil {
		return nil, err
	}
	res := &Result{Stop: StopDone, Items: len(h.Items) + h.Dropped}
	if h.Dropped > 0 {
		res.Drops.N, res.Drops.Reason = h.Dropped, h.DropReason
	}
	sinks.Add(&res.Batch, sinks.PSHighlight{
		HighlightID: id, Title: textPtr(h.Title), MediaCount: intPtr(h.MediaCount),
		OwnerUsername: textPtr(h.Username), OwnerVerified: flagPtr(h.UserVerified), Raw: h.Raw,
	})
	for _, it := range h.Items {
		item := sinks.PSHighlightItem{HighlightID: id, Position: it.Pos + 1, ItemID: textPtr(it.V.ID), MediaType: intPtr(it.V.MediaType), Raw: it.Raw}
		if len(it.V.VideoURLs) > 0 {
			item.VideoURL = &it.V.VideoURLs[0]
		}
		sinks.Add(&res.Batch, item)
	}
	return res, nil
}
