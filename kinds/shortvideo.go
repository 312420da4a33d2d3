package kinds

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.yaml.in/yaml/v3"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// The short-video platform's kinds, each declared once: its name (the
// constant), the seed list that starts it (a field of ShortVideoSeeds named
// by its entry), its fetch and how a page maps to rows and child tasks.

// ShortVideoSeeds are the seeds on the short-video platform; the kind whose
// entry names a field's key validates its values and makes their tasks.
type ShortVideoSeeds struct {
	Profiles        []string      `yaml:"profiles" json:"profiles,omitempty"`
	SecUIDs         []string      `yaml:"sec_uids" json:"sec_uids,omitempty"`
	KeywordSearches []KeywordSeed `yaml:"keyword_searches" json:"keyword_searches,omitempty"`
	HashtagSearches []string      `yaml:"hashtag_searches" json:"hashtag_searches,omitempty"`
	TopSearches     []string      `yaml:"top_searches" json:"top_searches,omitempty"`
	Songs           []string      `yaml:"songs" json:"songs,omitempty"`
	Live            []string      `yaml:"live" json:"live,omitempty"`
	Videos          []string      `yaml:"videos" json:"videos,omitempty"`
	TrendingFeed    bool          `yaml:"trending_feed" json:"trending_feed,omitempty"`
	PopularVideos   bool          `yaml:"popular_videos" json:"popular_videos,omitempty"`
	PopularCreators bool          `yaml:"popular_creators" json:"popular_creators,omitempty"`
}

// KindSVProfile: a profile, with its recent videos; key: handle.
const KindSVProfile = "shortvideo.profile"

var _ = register(&Kind{
	Name:  KindSVProfile,
	Seeds: seedsOf("seeds.shortvideo.profiles", checkHandle, handleTasks),
	Call: mapped(func(t *Task) sources.Call[*endpoints.SVProfile] {
		if id, ok := strings.CutPrefix(t.Key, userIDKey); ok {
			return endpoints.SVProfileByIDCall(id)
		}
		return endpoints.SVProfileCall(t.Key)
	}, mapSVProfile),
	Fresh: &FreshRule{Expand: storedSVProfile},
})

// storedSVProfile expands a fresh profile as fetchSVProfile would, from
// the stored secUid and private flag. Its videos' authors are not
// followed: a profile's item list is its own videos, whose author is the
// profile itself (one level deeper: never a smaller depth), and nothing
// stored links a profile fetch to its list's videos, so a video in it by
// another author cannot be told.
func storedSVProfile(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, bool, error) {
	var id account
	var private bool
	err := storedProfile.QueryRow(ctx, q, storedProfileParams{UniqueID: t.Key}).Scan(&id.secUID, &id.userID, &private)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil // not stored under this key: fetch it
	}
	if err != nil || private {
		return nil, err == nil, err
	}
	id.handle = t.Key
	res := &Result{}
	(&mapper{job: j}).followLists(res, t, id)
	return res.Children, true, nil
}

// userIDKey prefixes the key of a profile task addressed by the account's
// numeric user id: an author an answer names by ids only (the real trending
// feed), whose profile the real service gives by user_id.
const userIDKey = "user_id:"

// authorProfile is the key of the profile task of a video's author: its
// handle, else its numeric user id when the dialect's profile takes one;
// "" when it has neither.
func (m *mapper) authorProfile(a endpoints.SVAuthor) string {
	switch {
	case a.UniqueID != "":
		return string(a.UniqueID)
	case a.UID != "" && m.byUserID():
		return userIDKey + string(a.UID)
	}
	return ""
}

// byUserID reports whether the dialect's profile takes a numeric user id.
func (m *mapper) byUserID() bool {
	return slices.Contains(m.job.Route(KindSVProfile).Accepts, "user_id")
}

// account is what a profile tells of the ways to address its lists.
type account struct{ handle, secUID, userID string }

// followLists adds the account's followers and following tasks, each
// keyed by the identifier its endpoint is addressed by in the upstream's
// dialect (the contract's secUid; the real service's handle, or for
// followers the numeric user id when the job renames secUid to user_id),
// so that a list is walked once per run whichever profile found it, and
// its videos list, by handle. It returns why a follow list was left out,
// "" when none was.
func (m *mapper) followLists(res *Result, t *Task, id account) (why string) {
	params := map[string]string{"handle": id.handle}
	for _, d := range []*edgeDecl{edgeFollowers, edgeFollowing} {
		by := m.job.SentAs(d.To, "secUid")
		key := map[string]string{"handle": id.handle, "user_id": id.userID}[by]
		if by != "handle" && by != "user_id" {
			by, key = "secUid", id.secUID
		}
		if key == "" {
			why = "profile carries no " + by + ", lists not fetched"
			continue
		}
		m.follow(res, t, d, key, params)
	}
	if !strings.HasPrefix(id.handle, userIDKey) {
		m.follow(res, t, edgeVideos, id.handle, params) // its videos, by handle
	}
	return why
}

func mapSVProfile(m *mapper, t *Task, p *endpoints.SVProfile) (*Result, error) {
	handle := string(p.User.UniqueID)
	if handle == "" {
		handle = t.Key
	}
	if err := checkObjectKeys("shortvideo/profile", "user.uniqueId", handle, "user.secUid", string(p.User.SecUID), "user.id", string(p.User.ID)); err != nil {
		return nil, err
	}
	res := &Result{Stop: StopDone, Items: 1}
	sinks.Add(&res.Batch, sinks.SVUser{
		UniqueID:  handle,
		UserID:    textPtr(p.User.ID),
		SecUID:    textPtr(p.User.SecUID),
		Nickname:  textPtr(p.User.Nickname),
		AvatarURL: textPtr(p.User.AvatarLarger),
		Signature: textPtr(p.User.Signature),
		Verified:  flagPtr(p.User.Verified),
		Private:   flagPtr(p.User.PrivateAccount),
		Profile:   true,
		Raw:       p.Raw,
	})
	sinks.Add(&res.Batch, sinks.SVUserSnapshot{
		UniqueID:       handle,
		FollowerCount:  intPtr(p.Stats.FollowerCount),
		FollowingCount: intPtr(p.Stats.FollowingCount),
		HeartCount:     intPtr(p.Stats.HeartCount),
		VideoCount:     intPtr(p.Stats.VideoCount),
		DiggCount:      intPtr(p.Stats.DiggCount),
	})
	// The profile's recent videos are videos like any other.
	for _, v := range p.Videos {
		if v.V.Author.UniqueID == "" {
			v.V.Author.UniqueID = sources.Text(handle)
		}
		m.addVideo(t, res, v, "", "itemList")
	}
	if p.VideosDropped > 0 {
		res.Drops.N += p.VideosDropped
		res.Drops.Reason = p.VideosDropReason
	}
	if p.User.PrivateAccount.V {
		res.Stop = "done: private account, lists not fetched"
	} else if why := m.followLists(res, t, account{handle: handle, secUID: string(p.User.SecUID), userID: string(p.User.ID)}); why != "" {
		res.Stop = "done: " + why
	}
	return res, nil
}

// KindSVFollowers and KindSVFollowing: a user's followers / following
// lists; key: secUid; params: handle (the owner's users key).
const (
	KindSVFollowers = "shortvideo.followers"
	KindSVFollowing = "shortvideo.following"
)

var secUIDRe = regexp.MustCompile(`^[A-Za-z0-9_\-.]{8,200}$`)

var _ = register(&Kind{
	Name:  KindSVFollowers,
	List:  true,
	Pages: "followers",
	// A secUid seed is both lists of its account, or those the expand
	// section turns on.
	Seeds: seedsOf("seeds.shortvideo.sec_uids", quoted(func(v string) string {
		if !secUIDRe.MatchString(v) {
			return "is not a secUid (8 to 200 letters, digits, _ - .)"
		}
		return ""
	}), func(j Job, k *Kind, s string) []NewTask {
		// The owner's handle is unknown: edges name it by its secUid.
		owner := map[string]string{"handle": secUIDUser(s)}
		followers, following := j.Edge("followers"), j.Edge("following")
		var out []NewTask
		if followers != nil || following == nil {
			out = append(out, k.task(j, s, owner, 0))
		}
		if following != nil || followers == nil {
			out = append(out, named(KindSVFollowing).task(j, s, owner, 0))
		}
		return out
	}),
	Call: byKeyCursor(endpoints.SVFollowersCall, mapSVFollowList),
	Seen: seenBy(seenFollowers, followOwner, func(r *Result) []string {
		return followKeys(r, func(f sinks.SVFollow) string { return f.Follower })
	}),
	Reexpand: storedFollowList(&runFollowers),
	Known:    knownFollowList(&knownFollowers),
})

var _ = register(&Kind{
	Name:  KindSVFollowing,
	List:  true,
	Pages: "following",
	Call:  byKeyCursor(endpoints.SVFollowingCall, mapSVFollowList),
	Seen: seenBy(seenFollowing, followOwner, func(r *Result) []string {
		return followKeys(r, func(f sinks.SVFollow) string { return f.Followee })
	}),
	Reexpand: storedFollowList(&runFollowing),
	Known:    knownFollowList(&knownFollowing),
})

// storedFollowList expands a follow list again from the entries its walk
// in this run stored (stmt: RunFollowers or RunFollowing): each entry's
// profile, as mapSVFollowList would.
func storedFollowList(stmt *db.Stmt[runListParams]) ReexpandFunc {
	return func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
		rows, err := stmt.Query(ctx, q, runListParams{Owner: followOwner(t), RunID: t.RunID})
		return followEntries(j, t, rows, err)
	}
}

// knownFollowList expands a follow list from its entries as the job's runs
// know it (stmt: KnownFollowers or KnownFollowing), as mapSVFollowList
// would.
func knownFollowList(stmt *db.Stmt[knownListParams]) KnownFunc {
	return func(ctx context.Context, q db.Querier, j Job, t *Task, within time.Duration) ([]NewTask, error) {
		rows, err := stmt.Query(ctx, q, knownListParams{Owner: followOwner(t), Kind: t.Kind, Key: t.Key, RunID: t.RunID, WithinUS: within.Microseconds(), MaxPages: t.MaxPages})
		return followEntries(j, t, rows, err)
	}
}

// followEntries are the tasks t's entries (rows of one handle each) lead
// to: each entry's profile.
func followEntries(j Job, t *Task, rows pgx.Rows, err error) ([]NewTask, error) {
	if err != nil {
		return nil, err
	}
	entries, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	res, m := &Result{}, &mapper{job: j}
	for _, e := range entries {
		if !isSecUIDUser(e) {
			m.follow(res, t, edgeFollowerProfiles, e, nil)
		}
	}
	return res.Children, nil
}

func followOwner(t *Task) string { return t.Params["handle"] }

func followKeys(r *Result, entry func(sinks.SVFollow) string) []string {
	rows := sinks.Rows[sinks.SVFollow](&r.Batch)
	keys := make([]string, len(rows))
	for i, f := range rows {
		keys[i] = entry(f)
	}
	return keys
}

// secUIDUser is the users key of an account known only by its secUid.
func secUIDUser(secUID string) string { return "secuid:" + secUID }

func mapSVFollowList(m *mapper, t *Task, page *sources.Page[endpoints.SVFollowEntry]) (*Result, error) {
	owner := t.Params["handle"]
	if owner == "" {
		return nil, fmt.Errorf("task %d: %s without params.handle", t.ID, t.Kind)
	}
	res := listResult(t, page)
	if t.Pages == 0 && isSecUIDUser(owner) {
		// An account known only by its secUid gets a row of its own.
		sinks.Add(&res.Batch, sinks.SVUser{UniqueID: owner, SecUID: &t.Key, Raw: stubJSON("secUid", t.Key)})
	}
	list := "followers"
	if t.Kind == KindSVFollowing {
		list = "following"
	}
	for _, it := range page.Items {
		e := it.V
		if why := entryProblem(list, it.Pos, "uniqueId", e.UniqueID, "secUid", e.SecUID); why != "" {
			res.Drop(why)
			continue
		}
		sinks.Add(&res.Batch, sinks.SVUser{
			UniqueID: e.UniqueID,
			SecUID:   strPtr(e.SecUID),
			Nickname: strPtr(e.Nickname),
			Verified: flagPtr(e.Verified),
			Raw:      it.Raw,
		})
		edge := sinks.SVFollow{Follower: e.UniqueID, Followee: owner, Raw: it.Raw}
		if t.Kind == KindSVFollowing {
			edge.Follower, edge.Followee = owner, e.UniqueID
		}
		sinks.Add(&res.Batch, edge)
		m.follow(res, t, edgeFollowerProfiles, e.UniqueID, nil)
	}
	return res, nil
}

func isSecUIDUser(handle string) bool { return len(handle) > 7 && handle[:7] == "secuid:" }

// addVideo adds a video, its stats snapshot and, when the edge is on, its
// author's profile task. songID links it to a song when known from context.
// A video that cannot be stored (no id, a key over the cap, a time out of
// range) is counted as dropped, as an entry of list, and addVideo returns
// false. An author sent without a handle (the real trending feed) is kept
// by its secUid, as a user row of its own (see videoAuthor).
func (m *mapper) addVideo(t *Task, res *Result, it sources.Item[endpoints.SVVideo], songID, list string) bool {
	v := it.V
	if songID == "" {
		songID = string(v.MusicID)
	}
	author := videoAuthor(v.Author)
	why := entryProblem(list, it.Pos, "id", string(v.ID), "author.uniqueId", author, "music.id", songID)
	if why == "" {
		if err := sinks.CheckUnixTime("createTime", v.CreateTime.V); err != nil {
			why = fmt.Sprintf("%s[%d]: %v", list, it.Pos, err)
		}
	}
	if why != "" {
		res.Drop(why)
		return false
	}
	if author != "" && v.Author.UniqueID == "" {
		sinks.Add(&res.Batch, sinks.SVUser{
			UniqueID: author, UserID: textPtr(v.Author.UID), SecUID: textPtr(v.Author.SecUID), Nickname: textPtr(v.Author.Nickname),
			Raw: stubJSON("secUid", string(v.Author.SecUID)),
		})
	}
	sinks.Add(&res.Batch, sinks.SVVideo{
		VideoID:        string(v.ID),
		AuthorUniqueID: strPtr(author),
		Description:    textPtr(v.Desc),
		CreateTime:     intPtr(v.CreateTime),
		SongID:         strPtr(songID),
		Partial:        !v.Stats.DiggCount.Valid,
		Raw:            it.Raw,
	})
	sinks.Add(&res.Batch, sinks.SVVideoSnapshot{
		VideoID:      string(v.ID),
		PlayCount:    intPtr(v.Stats.PlayCount),
		DiggCount:    intPtr(v.Stats.DiggCount),
		CommentCount: intPtr(v.Stats.CommentCount),
		ShareCount:   intPtr(v.Stats.ShareCount),
	})
	for _, g := range v.Hashtags {
		if sinks.CheckKey("cha_name", string(g.Name)) != nil {
			continue // a name no key can hold: the video is kept without it
		}
		sinks.Add(&res.Batch, sinks.SVHashtag{Name: string(g.Name), Partial: true, Raw: g.Raw})
		sinks.Add(&res.Batch, sinks.SVVideoHashtag{VideoID: string(v.ID), Name: string(g.Name)})
	}
	if key := m.authorProfile(v.Author); key != "" {
		m.follow(res, t, edgeVideoAuthors, key, nil)
	}
	return true
}

// videoAuthor is the users key of a video's author: its handle, else the
// key of an account known only by its secUid; "" when neither was sent (an
// author with only a uid has no key: the video is kept without one).
func videoAuthor(a endpoints.SVAuthor) string {
	switch {
	case a.UniqueID != "":
		return string(a.UniqueID)
	case a.SecUID != "":
		return secUIDUser(string(a.SecUID))
	}
	return ""
}

// addSearchVideo adds a video found by a search (kind, query key qk) at its
// rank, and its author's profile task when that edge is on.
func (m *mapper) addSearchVideo(t *Task, res *Result, it sources.Item[endpoints.SVVideo], kind, qk, list string) {
	if !m.addVideo(t, res, it, "", list) {
		return
	}
	id := string(it.V.ID)
	sinks.Add(&res.Batch, sinks.SVSearchResult{
		Kind: kind, QueryKey: qk, Rank: t.Items + it.Pos + 1, Type: sinks.ResultVideo, VideoID: &id, Raw: it.Raw,
	})
	if key := m.authorProfile(it.V.Author); key != "" {
		m.follow(res, t, edgeSearchProfiles, key, nil)
	}
}

// KindSVKeywordSearch: a keyword search's videos; key: its query's Key();
// params: the query's Params.
const KindSVKeywordSearch = "shortvideo.keyword_search"

var _ = register(&Kind{
	Name: KindSVKeywordSearch,
	List: true,
	Seeds: seedsOf("seeds.shortvideo.keyword_searches", func(k KeywordSeed) string {
		if len(k.Keyword) > MaxKeywordBytes || len(k.Query) > MaxKeywordBytes {
			return fmt.Sprintf("is %d bytes long; a search is at most %d", max(len(k.Keyword), len(k.Query)), MaxKeywordBytes)
		} else if err := k.Validate(); err != nil {
			return err.Error()
		}
		return ""
	}, func(j Job, k *Kind, q KeywordSeed) []NewTask {
		return []NewTask{k.task(j, q.Key(), flatParams(q.Params()), 0)}
	}),
	Call: mapped(func(t *Task) sources.Call[*sources.Page[endpoints.SVVideo]] {
		return endpoints.SVKeywordSearchCall(endpoints.ParseKeywordQuery(paramValues(t.Params)), t.Cursor)
	}, mapSVKeywordSearch),
	Reexpand: storedSearch(sinks.SearchKeyword, keywordQueryKey),
})

// keywordQueryKey is the query key of keyword search t's results.
func keywordQueryKey(t *Task) string {
	q := endpoints.ParseKeywordQuery(paramValues(t.Params))
	return sinks.QueryKey(q.Term(), q.Filters())
}

// searchQueryKey is the query key of the results of a search keyed by its
// keyword (hashtag, top and reels searches).
func searchQueryKey(t *Task) string { return sinks.QueryKey(t.Key, nil) }

// searchEntries maps a search's page entry by entry, each with the
// search's query key qk(t).
func searchEntries[T any](qk func(*Task) string, each func(m *mapper, t *Task, res *Result, qk string, it sources.Item[T])) func(*mapper, *Task, *sources.Page[T]) (*Result, error) {
	return func(m *mapper, t *Task, page *sources.Page[T]) (*Result, error) {
		res, key := listResult(t, page), qk(t)
		for _, it := range page.Items {
			each(m, t, res, key, it)
		}
		return res, nil
	}
}

// byKeyword is a search keyed by its keyword alone and walked by cursor,
// seeded by the list at seedKey, its results stored as search results of
// kind sink (the hashtag and top searches).
func byKeyword[A any](name, seedKey string, call func(key, cursor string) sources.Call[A], mapTo func(*mapper, *Task, A) (*Result, error), sink string) *Kind {
	return &Kind{Name: name, List: true, Seeds: seedsOf(seedKey, checkSearch, searchTasks),
		Call: byKeyCursor(call, mapTo), Reexpand: storedSearch(sink, searchQueryKey)}
}

// KeywordSeed is a keyword search in either published form: a plain string
// is form A (keyword); a mapping with query and options is form B.
type KeywordSeed struct {
	endpoints.KeywordQuery
}

// setText is form A, as a line of a seed file writes it.
func (k *KeywordSeed) setText(s string) { k.Keyword = s }

// DecodeYAML reads either form (yamlstrict.Unmarshaler).
func (k *KeywordSeed) DecodeYAML(d *yamlstrict.Decoder, n *yaml.Node, path string, depth int) {
	switch {
	case n.Kind == yaml.ScalarNode && !yamlstrict.IsNull(n):
		d.DecodeValue(n, reflect.ValueOf(&k.Keyword).Elem(), path, depth)
	case n.Kind == yaml.MappingNode:
		d.DecodeStruct(n, reflect.ValueOf(&k.KeywordQuery).Elem(), path, depth)
	default:
		d.WrongType(n, path, "a keyword, or a mapping with query and options")
	}
}

var mapSVKeywordSearch = searchEntries(keywordQueryKey, func(m *mapper, t *Task, res *Result, qk string, it sources.Item[endpoints.SVVideo]) {
	m.addSearchVideo(t, res, it, sinks.SearchKeyword, qk, "videos")
})

// flatParams are request parameters as a task's params; paramValues
// reads them back.
func flatParams(v url.Values) map[string]string {
	p := make(map[string]string, len(v))
	for k := range v {
		p[k] = v.Get(k)
	}
	return p
}

func paramValues(p map[string]string) url.Values {
	v := make(url.Values, len(p))
	for k, s := range p {
		v.Set(k, s)
	}
	return v
}

// KindSVHashtagSearch: a hashtag search; key: the keyword.
const KindSVHashtagSearch = "shortvideo.hashtag_search"

// The real service's videos under the hashtag expand to their authors; the
// contract's hashtags to nothing.
var _ = register(byKeyword(KindSVHashtagSearch, "seeds.shortvideo.hashtag_searches", endpoints.SVHashtagSearchCall, mapSVHashtagSearch, sinks.SearchHashtag))

// mapSVHashtagSearch maps the contract's hashtags, and the real service's
// videos under the hashtag as that search's video results, as the keyword
// search's are.
var mapSVHashtagSearch = searchEntries(searchQueryKey, func(m *mapper, t *Task, res *Result, qk string, it sources.Item[endpoints.SVHashtag]) {
	if v := it.V.Video; v != nil {
		m.addSearchVideo(t, res, sources.Item[endpoints.SVVideo]{V: *v, Raw: it.Raw, Pos: it.Pos}, sinks.SearchHashtag, qk, "videos")
		return
	}
	name := string(it.V.Name)
	if why := entryProblem("hashtags", it.Pos, "name", name); why != "" {
		res.Drop(why)
		return
	}
	sinks.Add(&res.Batch, sinks.SVHashtag{Name: name, Raw: it.Raw})
	sinks.Add(&res.Batch, sinks.SVHashtagSnapshot{
		Name: name, ViewCount: intPtr(it.V.ViewCount), VideoCount: intPtr(it.V.VideoCount), Growth: it.V.Growth,
	})
	sinks.Add(&res.Batch, sinks.SVSearchResult{
		Kind: sinks.SearchHashtag, QueryKey: qk, Rank: t.Items + it.Pos + 1, Type: sinks.ResultHashtag, HashtagName: &name, Raw: it.Raw,
	})
})

// KindSVTopSearch: a top search, in the platform's ranking; key: the keyword.
const KindSVTopSearch = "shortvideo.top_search"

var _ = register(byKeyword(KindSVTopSearch, "seeds.shortvideo.top_searches", endpoints.SVTopSearchCall, mapSVTopSearch, sinks.SearchTop))

var mapSVTopSearch = searchEntries(searchQueryKey, func(m *mapper, t *Task, res *Result, qk string, it sources.Item[endpoints.SVTopResult]) {
	r := sinks.SVSearchResult{Kind: sinks.SearchTop, QueryKey: qk, Rank: t.Items + it.Pos + 1, Type: string(it.V.Type), Raw: it.Raw}
	why := ""
	switch r.Type {
	case sinks.ResultUser:
		why = entryProblem("results", it.Pos, "uniqueId", string(it.V.UniqueID))
	case sinks.ResultHashtag:
		why = entryProblem("results", it.Pos, "name", string(it.V.Name))
	case sinks.ResultSound:
		why = entryProblem("results", it.Pos, "id", string(it.V.ID))
	}
	if why != "" {
		res.Drop(why)
		return
	}
	switch r.Type {
	case sinks.ResultVideo:
		v := it.V.Video
		if !m.addVideo(t, res, sources.Item[endpoints.SVVideo]{V: v, Raw: it.Raw, Pos: it.Pos}, "", "results") {
			return
		}
		r.VideoID = strPtr(string(v.ID))
		if key := m.authorProfile(v.Author); key != "" && !edgeVideoAuthors.on(m.job) {
			m.follow(res, t, edgeSearchProfiles, key, nil) // addVideo did, as its author
		}
	case sinks.ResultUser:
		h := string(it.V.UniqueID)
		sinks.Add(&res.Batch, sinks.SVUser{UniqueID: h, Nickname: textPtr(it.V.Nickname), Raw: it.Raw})
		r.UniqueID = &h
		m.follow(res, t, edgeSearchProfiles, h, nil)
	case sinks.ResultHashtag:
		n := string(it.V.Name)
		sinks.Add(&res.Batch, sinks.SVHashtag{Name: n, Partial: true, Raw: it.Raw})
		r.HashtagName = &n
	case sinks.ResultSound:
		id := string(it.V.ID)
		sinks.Add(&res.Batch, sinks.SVSong{SongID: id, Title: textPtr(it.V.Title), Partial: true, Raw: it.Raw})
		r.SongID = &id
		m.follow(res, t, edgeSearchSongs, id, nil)
	}
	sinks.Add(&res.Batch, r)
})

// KindSVSong: a song; key: song id.
const KindSVSong = "shortvideo.song"

var songRe = regexp.MustCompile(`^[A-Za-z0-9_\-]{1,64}$`)

var _ = register(&Kind{
	Name: KindSVSong,
	Seeds: seedsOf("seeds.shortvideo.songs", quoted(func(v string) string {
		if !songRe.MatchString(v) {
			return "is not a song id (1 to 64 letters, digits, _ and -)"
		}
		return ""
	}), asIsTasks),
	Call:  byKey(endpoints.SVSongCall, mapSVSong),
	Fresh: &FreshRule{Expand: always(songLists)},
})

// songLists are the tasks a song makes whatever its answer: its videos
// list (mapSVSong), keyed by the song's id.
func songLists(j Job, t *Task) []NewTask {
	res := &Result{}
	(&mapper{job: j}).follow(res, t, edgeSongVideos, t.Key, nil)
	return res.Children
}

func mapSVSong(m *mapper, t *Task, s *endpoints.SVSong) (*Result, error) {
	id := string(s.ID)
	if id == "" {
		id = t.Key
	}
	if err := checkObjectKeys("shortvideo/song", "id", id); err != nil {
		return nil, err
	}
	res := &Result{Stop: StopDone, Items: 1}
	sinks.Add(&res.Batch, sinks.SVSong{
		SongID: id, Title: textPtr(s.Title), AuthorName: textPtr(s.AuthorName), DurationSeconds: intPtr(s.Duration),
		CoverLargeURL: textPtr(s.CoverLarge), CoverThumbURL: textPtr(s.CoverThumb), Raw: s.Raw,
	})
	sinks.Add(&res.Batch, sinks.SVSongSnapshot{SongID: id, UsageCount: intPtr(s.UsageCount)})
	m.follow(res, t, edgeSongVideos, t.Key, nil)
	return res, nil
}

// KindSVSongVideos: the videos using a song; key: song id.
const KindSVSongVideos = "shortvideo.song_videos"

var _ = register(&Kind{
	Name:  KindSVSongVideos,
	List:  true,
	Pages: "song_videos",
	Call:  byKeyCursor(endpoints.SVSongVideosCall, mapSVSongVideos),
	Seen: seenBy(seenSongVideos, func(t *Task) string { return t.Key }, func(r *Result) []string {
		rows := sinks.Rows[sinks.SVSongVideo](&r.Batch)
		keys := make([]string, len(rows))
		for i, v := range rows {
			keys[i] = v.VideoID
		}
		return keys
	}),
	Reexpand: storedVideoAuthors(&runSongVideoAuthors, func(t *Task) string { return t.Key }),
})

func mapSVSongVideos(m *mapper, t *Task, page *sources.Page[endpoints.SVVideo]) (*Result, error) {
	res := listResult(t, page)
	for _, it := range page.Items {
		if !m.addVideo(t, res, it, t.Key, "videos") {
			continue
		}
		sinks.Add(&res.Batch, sinks.SVSongVideo{SongID: t.Key, VideoID: string(it.V.ID)})
	}
	return res, nil
}

// KindSVLive: a user's live status; key: handle.
const KindSVLive = "shortvideo.live"

var _ = register(&Kind{
	Name:  KindSVLive,
	Seeds: seedsOf("seeds.shortvideo.live", checkHandle, handleTasks),
	Call:  byKey(endpoints.SVLiveCall, mapSVLive),
})

func mapSVLive(m *mapper, t *Task, l *endpoints.SVLive) (*Result, error) {
	res := &Result{Stop: StopDone, Items: 1}
	var start *int64
	if l.StartTime.Valid && l.StartTime.V != 0 {
		start = &l.StartTime.V
	}
	sinks.Add(&res.Batch, sinks.SVLiveStatus{
		UniqueID: t.Key, IsLive: flagPtr(l.IsLive), Title: textPtr(l.Title), ViewerCount: intPtr(l.ViewerCount), StartTime: start, Raw: l.Raw,
	})
	return res, nil
}

// KindSVTrending and KindSVPopularVideos: the trending feed and popular
// videos, one page each; key: "trending", "popular_videos".
const (
	KindSVTrending      = "shortvideo.trending_feed"
	KindSVPopularVideos = "shortvideo.popular_videos"
)

var _ = register(&Kind{
	Name:     KindSVTrending,
	Seeds:    seedFlag("seeds.shortvideo.trending_feed", "trending"),
	Call:     noKey(endpoints.SVTrendingFeedCall, mapSVFeed(sinks.FeedTrending)),
	Reexpand: storedVideoAuthors(&runFeedAuthors, func(*Task) string { return sinks.FeedTrending }),
})

var _ = register(&Kind{
	Name:     KindSVPopularVideos,
	Seeds:    seedFlag("seeds.shortvideo.popular_videos", "popular_videos"),
	Call:     noKey(endpoints.SVPopularVideosCall, mapSVFeed(sinks.FeedPopularVideos)),
	Reexpand: storedVideoAuthors(&runFeedAuthors, func(*Task) string { return sinks.FeedPopularVideos }),
})

// mapSVFeed maps a page of feed's videos.
func mapSVFeed(feed string) func(m *mapper, t *Task, page *sources.Page[endpoints.SVVideo]) (*Result, error) {
	return func(m *mapper, t *Task, page *sources.Page[endpoints.SVVideo]) (*Result, error) {
		res := &Result{Stop: StopDone, Items: page.Info().Items, Drops: Drops{N: page.Dropped, Reason: page.DropReason}}
		for _, it := range page.Items {
			if !m.addVideo(t, res, it, "", "videos") {
				continue
			}
			sinks.Add(&res.Batch, sinks.SVFeedEntry{Feed: feed, Rank: it.Pos + 1, VideoID: string(it.V.ID), Raw: it.Raw})
		}
		return res, nil
	}
}

// KindSVPopularCreators: popular creators, one page; key: "popular_creators".
const KindSVPopularCreators = "shortvideo.popular_creators"

var _ = register(&Kind{
	Name:  KindSVPopularCreators,
	Seeds: seedFlag("seeds.shortvideo.popular_creators", "popular_creators"),
	Call:  noKey(endpoints.SVPopularCreatorsCall, mapSVPopularCreators),
})

func mapSVPopularCreators(m *mapper, t *Task, page *sources.Page[endpoints.SVCreator]) (*Result, error) {
	res := &Result{Stop: StopDone, Items: page.Info().Items, Drops: Drops{N: page.Dropped, Reason: page.DropReason}}
	for _, it := range page.Items {
		h := string(it.V.UniqueID)
		if why := entryProblem("creators", it.Pos, "uniqueId", h); why != "" {
			if h == "" && it.V.UserID != "" {
				why += " (user_id " + string(it.V.UserID) + ")" // the real service's entries may name no handle
			}
			res.Drop(why)
			continue
		}
		sinks.Add(&res.Batch, sinks.SVUser{UniqueID: h, UserID: textPtr(it.V.UserID), Nickname: textPtr(it.V.Nickname), Verified: flagPtr(it.V.Verified), Raw: it.Raw})
		sinks.Add(&res.Batch, sinks.SVPopularCreator{
			Rank: it.Pos + 1, UniqueID: h, FollowerCount: intPtr(it.V.FollowerCount), Verified: flagPtr(it.V.Verified), Raw: it.Raw,
		})
	}
	return res, nil
}
