package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

func fetchSVProfile(ctx context.Context, c *crawl, t *Task) (*result, error) {
	p, err := c.client.SVProfile(ctx, t.Key)
	if err != nil {
		return nil, err
	}
	handle := string(p.User.UniqueID)
	if handle == "" {
		handle = t.Key
	}
	if err := checkObjectKeys("shortvideo/profile", "user.uniqueId", handle, "user.secUid", string(p.User.SecUID), "user.id", string(p.User.ID)); err != nil {
		return nil, err
	}
	res := &result{Stop: stopDone, Items: 1}
	res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{
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
	res.Batch.SVSnapshots = append(res.Batch.SVSnapshots, sinks.SVUserSnapshot{
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
		c.addVideo(t, res, v, "", "itemList")
	}
	if p.VideosDropped > 0 {
		res.Drops.N += p.VideosDropped
		res.Drops.Reason = p.VideosDropReason
	}
	secUID := string(p.User.SecUID)
	switch {
	case p.User.PrivateAccount.V:
		res.Stop = "done: private account, lists not fetched"
	case secUID == "":
		res.Stop = "done: profile carries no secUid, lists not fetched"
	default:
		params := map[string]string{"handle": handle}
		if e := c.job.Expand.Followers; e != nil {
			res.Children = append(res.Children, same(t, KindSVFollowers, secUID, params, e.MaxPages))
		}
		if e := c.job.Expand.Following; e != nil {
			res.Children = append(res.Children, same(t, KindSVFollowing, secUID, params, e.MaxPages))
		}
	}
	return res, nil
}

func fetchSVFollowList(ctx context.Context, c *crawl, t *Task) (*result, error) {
	owner := t.Params["handle"]
	if owner == "" {
		return nil, fmt.Errorf("task %d: %s without params.handle", t.ID, t.Kind)
	}
	fetch := c.client.SVFollowers
	if t.Kind == KindSVFollowing {
		fetch = c.client.SVFollowing
	}
	page, err := fetch(ctx, t.Key, t.Cursor)
	if err != nil {
		return nil, err
	}
	res := listResult(t, page)
	if t.Pages == 0 && isSecUIDUser(owner) {
		// An account known only by its secUid gets a row of its own.
		res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{UniqueID: owner, SecUID: &t.Key, Raw: stubJSON("secUid", t.Key)})
	}
	list := "followers"
	if t.Kind == KindSVFollowing {
		list = "following"
	}
	for _, it := range page.Items {
		e := it.V
		if why := entryProblem(list, it.Pos, "uniqueId", e.UniqueID, "secUid", e.SecUID); why != "" {
			res.drop(why)
			continue
		}
		res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{
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
		res.Batch.SVFollows = append(res.Batch.SVFollows, edge)
		if c.job.Expand.FollowerProfiles != nil {
			res.Children = append(res.Children, hop(t, KindSVProfile, e.UniqueID, nil, 0))
		}
	}
	return res, nil
}

func isSecUIDUser(handle string) bool { return len(handle) > 7 && handle[:7] == "secuid:" }

// addVideo adds a video, its stats snapshot and, when the edge is on, its
// author's profile task. songID links it to a song when known from context.
// A video that cannot be stored (no id, a key over the cap, a time out of
// range) is counted as dropped, as an entry of list, and addVideo returns
// false.
func (c *crawl) addVideo(t *Task, res *result, it sources.Item[sources.SVVideo], songID, list string) bool {
	v := it.V
	if songID == "" {
		songID = string(v.MusicID)
	}
	why := entryProblem(list, it.Pos, "id", string(v.ID), "author.uniqueId", string(v.Author.UniqueID), "music.id", songID)
	if why == "" {
		if err := sinks.CheckUnixTime("createTime", v.CreateTime.V); err != nil {
			why = fmt.Sprintf("%s[%d]: %v", list, it.Pos, err)
		}
	}
	if why != "" {
		res.drop(why)
		return false
	}
	res.Batch.SVVideos = append(res.Batch.SVVideos, sinks.SVVideo{
		VideoID:        string(v.ID),
		AuthorUniqueID: textPtr(v.Author.UniqueID),
		Description:    textPtr(v.Desc),
		CreateTime:     intPtr(v.CreateTime),
		SongID:         strPtr(songID),
		Partial:        !v.Stats.DiggCount.Valid,
		Raw:            it.Raw,
	})
	res.Batch.SVVideoSnapshots = append(res.Batch.SVVideoSnapshots, sinks.SVVideoSnapshot{
		VideoID:      string(v.ID),
		PlayCount:    intPtr(v.Stats.PlayCount),
		DiggCount:    intPtr(v.Stats.DiggCount),
		CommentCount: intPtr(v.Stats.CommentCount),
		ShareCount:   intPtr(v.Stats.ShareCount),
	})
	if c.job.Expand.VideoAuthors != nil && v.Author.UniqueID != "" {
		res.Children = append(res.Children, hop(t, KindSVProfile, string(v.Author.UniqueID), nil, 0))
	}
	return true
}

func fetchSVKeywordSearch(ctx context.Context, c *crawl, t *Task) (*result, error) {
	q := keywordQuery(t.Params)
	page, err := c.client.SVKeywordSearch(ctx, q, t.Cursor)
	if err != nil {
		return nil, err
	}
	res := listResult(t, page)
	qk := searchKey(q)
	for _, it := range page.Items {
		if !c.addVideo(t, res, it, "", "videos") {
			continue
		}
		id := string(it.V.ID)
		res.Batch.SVSearchResults = append(res.Batch.SVSearchResults, sinks.SVSearchResult{
			Kind: sinks.SearchKeyword, QueryKey: qk, Rank: t.Items + it.Pos + 1, Type: sinks.ResultVideo, VideoID: &id, Raw: it.Raw,
		})
		if c.job.Expand.SearchResults != nil && it.V.Author.UniqueID != "" {
			res.Children = append(res.Children, hop(t, KindSVProfile, string(it.V.Author.UniqueID), nil, 0))
		}
	}
	return res, nil
}

// searchKey is how search_results name a keyword search: the term, then
// the form-B filters that change the ranking.
func searchKey(q sources.KeywordQuery) string {
	if q.Query == "" {
		return sinks.QueryKey(q.Keyword, nil)
	}
	f := url.Values{}
	for k, v := range map[string]string{"date_posted": q.DatePosted, "sort_by": q.SortBy, "region": strings.ToLower(q.Region)} {
		if v != "" {
			f.Set(k, v)
		}
	}
	if q.Trim {
		f.Set("trim", "true")
	}
	return sinks.QueryKey(q.Query, f)
}

func fetchSVHashtagSearch(ctx context.Context, c *crawl, t *Task) (*result, error) {
	page, err := c.client.SVHashtagSearch(ctx, t.Key, t.Cursor)
	if err != nil {
		return nil, err
	}
	res := listResult(t, page)
	qk := sinks.QueryKey(t.Key, nil)
	for _, it := range page.Items {
		name := string(it.V.Name)
		if why := entryProblem("hashtags", it.Pos, "name", name); why != "" {
			res.drop(why)
			continue
		}
		res.Batch.SVHashtags = append(res.Batch.SVHashtags, sinks.SVHashtag{Name: name, Raw: it.Raw})
		res.Batch.SVHashtagSnapshots = append(res.Batch.SVHashtagSnapshots, sinks.SVHashtagSnapshot{
			Name: name, ViewCount: intPtr(it.V.ViewCount), VideoCount: intPtr(it.V.VideoCount), Growth: growth(it.Raw),
		})
		res.Batch.SVSearchResults = append(res.Batch.SVSearchResults, sinks.SVSearchResult{
			Kind: sinks.SearchHashtag, QueryKey: qk, Rank: t.Items + it.Pos + 1, Type: sinks.ResultHashtag, HashtagName: &name, Raw: it.Raw,
		})
	}
	return res, nil
}

// growth extracts a hashtag's growth signals object, when it has one.
func growth(raw json.RawMessage) []byte {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	for _, k := range []string{"growth", "growthSignals", "trend"} {
		if g, ok := v[k]; ok && string(g) != "null" {
			return g
		}
	}
	return nil
}

func fetchSVTopSearch(ctx context.Context, c *crawl, t *Task) (*result, error) {
	page, err := c.client.SVTopSearch(ctx, t.Key, t.Cursor)
	if err != nil {
		return nil, err
	}
	res := listResult(t, page)
	follow := c.job.Expand.SearchResults != nil
	qk := sinks.QueryKey(t.Key, nil)
	for _, it := range page.Items {
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
			res.drop(why)
			continue
		}
		switch r.Type {
		case sinks.ResultVideo:
			var v sources.SVVideo
			_ = json.Unmarshal(it.Raw, &v)
			if v.ID == "" {
				v.ID = it.V.ID
			}
			if !c.addVideo(t, res, sources.Item[sources.SVVideo]{V: v, Raw: it.Raw, Pos: it.Pos}, "", "results") {
				continue
			}
			r.VideoID = strPtr(string(v.ID))
			if follow && v.Author.UniqueID != "" && c.job.Expand.VideoAuthors == nil {
				res.Children = append(res.Children, hop(t, KindSVProfile, string(v.Author.UniqueID), nil, 0))
			}
		case sinks.ResultUser:
			h := string(it.V.UniqueID)
			res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{UniqueID: h, Nickname: textPtr(it.V.Nickname), Raw: it.Raw})
			r.UniqueID = &h
			if follow {
				res.Children = append(res.Children, hop(t, KindSVProfile, h, nil, 0))
			}
		case sinks.ResultHashtag:
			n := string(it.V.Name)
			res.Batch.SVHashtags = append(res.Batch.SVHashtags, sinks.SVHashtag{Name: n, Partial: true, Raw: it.Raw})
			r.HashtagName = &n
		case sinks.ResultSound:
			id := string(it.V.ID)
			res.Batch.SVSongs = append(res.Batch.SVSongs, sinks.SVSong{SongID: id, Title: textPtr(it.V.Title), Partial: true, Raw: it.Raw})
			r.SongID = &id
			if follow {
				res.Children = append(res.Children, hop(t, KindSVSong, id, nil, 0))
			}
		}
		res.Batch.SVSearchResults = append(res.Batch.SVSearchResults, r)
	}
	return res, nil
}

func fetchSVSong(ctx context.Context, c *crawl, t *Task) (*result, error) {
	s, err := c.client.SVSong(ctx, t.Key)
	if err != nil {
		return nil, err
	}
	id := string(s.ID)
	if id == "" {
		id = t.Key
	}
	if err := checkObjectKeys("shortvideo/song", "id", id); err != nil {
		return nil, err
	}
	res := &result{Stop: stopDone, Items: 1}
	res.Batch.SVSongs = append(res.Batch.SVSongs, sinks.SVSong{
		SongID: id, Title: textPtr(s.Title), AuthorName: textPtr(s.AuthorName), DurationSeconds: intPtr(s.Duration),
		CoverLargeURL: textPtr(s.CoverLarge), CoverThumbURL: textPtr(s.CoverThumb), Raw: s.Raw,
	})
	res.Batch.SVSongSnapshots = append(res.Batch.SVSongSnapshots, sinks.SVSongSnapshot{SongID: id, UsageCount: intPtr(s.UsageCount)})
	if e := c.job.Expand.SongVideos; e != nil {
		res.Children = append(res.Children, same(t, KindSVSongVideos, t.Key, nil, e.MaxPages))
	}
	return res, nil
}

func fetchSVSongVideos(ctx context.Context, c *crawl, t *Task) (*result, error) {
	page, err := c.client.SVSongVideos(ctx, t.Key, t.Cursor)
	if err != nil {
		return nil, err
	}
	res := listResult(t, page)
	for _, it := range page.Items {
		if !c.addVideo(t, res, it, t.Key, "videos") {
			continue
		}
		res.Batch.SVSongVideos = append(res.Batch.SVSongVideos, sinks.SVSongVideo{SongID: t.Key, VideoID: string(it.V.ID)})
	}
	return res, nil
}

func fetchSVLive(ctx context.Context, c *crawl, t *Task) (*result, error) {
	l, err := c.client.SVLive(ctx, t.Key)
	if err != nil {
		return nil, err
	}
	res := &result{Stop: stopDone, Items: 1}
	var start *int64
	if l.StartTime.Valid && l.StartTime.V != 0 {
		start = &l.StartTime.V
	}
	res.Batch.SVLiveStatuses = append(res.Batch.SVLiveStatuses, sinks.SVLiveStatus{
		UniqueID: t.Key, IsLive: flagPtr(l.IsLive), Title: textPtr(l.Title), ViewerCount: intPtr(l.ViewerCount), StartTime: start, Raw: l.Raw,
	})
	return res, nil
}

func fetchSVFeed(ctx context.Context, c *crawl, t *Task) (*result, error) {
	fetch, feed := c.client.SVTrendingFeed, sinks.FeedTrending
	if t.Kind == KindSVPopularVideos {
		fetch, feed = c.client.SVPopularVideos, sinks.FeedPopularVideos
	}
	page, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	res := &result{Stop: stopDone, Items: page.Info().Items, Drops: Drops{N: page.Dropped, Reason: page.DropReason}}
	for _, it := range page.Items {
		if !c.addVideo(t, res, it, "", "videos") {
			continue
		}
		res.Batch.SVFeedEntries = append(res.Batch.SVFeedEntries, sinks.SVFeedEntry{Feed: feed, Rank: it.Pos + 1, VideoID: string(it.V.ID), Raw: it.Raw})
	}
	return res, nil
}

func fetchSVPopularCreators(ctx context.Context, c *crawl, t *Task) (*result, error) {
	page, err := c.client.SVPopularCreators(ctx)
	if err != nil {
		return nil, err
	}
	res := &result{Stop: stopDone, Items: page.Info().Items, Drops: Drops{N: page.Dropped, Reason: page.DropReason}}
	for _, it := range page.Items {
		h := string(it.V.UniqueID)
		if why := entryProblem("creators", it.Pos, "uniqueId", h); why != "" {
			res.drop(why)
			continue
		}
		res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{UniqueID: h, Nickname: textPtr(it.V.Nickname), Verified: flagPtr(it.V.Verified), Raw: it.Raw})
		res.Batch.SVPopularCreators = append(res.Batch.SVPopularCreators, sinks.SVPopularCreator{
			Rank: it.Pos + 1, UniqueID: h, FollowerCount: intPtr(it.V.FollowerCount), Verified: flagPtr(it.V.Verified), Raw: it.Raw,
		})
	}
	return res, nil
}
