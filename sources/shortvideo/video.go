package shortvideo

import (
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// Video is a video of the short-video platform, as listed by the keyword
// search, song videos, the trending feed and popular videos. Lists differ in
// how much they carry: the author may be absent and some lists carry only
// stats.playCount; absent counters have Valid false.
//
// Besides the contract's camelCase ({id, desc, createTime, author{uniqueId},
// stats{playCount}}) it accepts the platform's snake_case spelling
// ({aweme_id, create_time, author{unique_id}, statistics{play_count}}) and a
// search entry that wraps the video in aweme_info. Times may be ISO 8601
// strings (the top search's create_time, the trimmed lists'
// create_time_utc); a music id is read from id_str before id, as the
// platform's numeric id has lost digits wherever it went through a float.
type Video struct {
	ID         sources.Text
	Desc       sources.Text
	CreateTime sources.Int64
	Author     Author
	Stats      VideoStats
	MusicID    sources.Text
	// URL is the video's web address when the answer carries one (the real
	// service's url, else its share_url without the query); "" otherwise.
	URL sources.Text
	// Hashtags are the hashtags the video carries (the real service's
	// cha_list), each with its raw JSON; the contract's videos carry none.
	Hashtags []Tag
}

// Tag is a hashtag a video carries: its name without #, its id when sent.
type Tag struct {
	Name sources.Text
	ID   sources.Text
	Raw  json.RawMessage
}

func (g *Tag) UnmarshalJSON(b []byte) error {
	var w struct {
		ChaName sources.Text `json:"cha_name"`
		Name    sources.Text `json:"hashtag_name"`
		CID     sources.Text `json:"cid"`
		ID      sources.Text `json:"hashtag_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*g = Tag{Name: sources.FirstText(w.ChaName, w.Name), ID: sources.FirstText(w.CID, w.ID), Raw: json.RawMessage(b)}
	return nil
}

// Author is the author of a video. Some lists (the real trending feed)
// send no handle, only the ids: UID and SecUID.
type Author struct {
	UniqueID sources.Text
	Nickname sources.Text
	UID      sources.Text
	SecUID   sources.Text
}

type authorWire struct {
	UniqueID  sources.Text `json:"uniqueId"`
	UniqueIDS sources.Text `json:"unique_id"`
	Nickname  sources.Text `json:"nickname"`
	ID        sources.Text `json:"id"`
	UID       sources.Text `json:"uid"`
	SecUID    sources.Text `json:"secUid"`
	SecUIDS   sources.Text `json:"sec_uid"`
}

// VideoStats are the counters of a video.
type VideoStats struct {
	PlayCount    sources.Int64
	DiggCount    sources.Int64
	CommentCount sources.Int64
	ShareCount   sources.Int64
}

type statsWire struct {
	PlayCount     sources.Int64 `json:"playCount"`
	PlayCountS    sources.Int64 `json:"play_count"`
	DiggCount     sources.Int64 `json:"diggCount"`
	DiggCountS    sources.Int64 `json:"digg_count"`
	CommentCount  sources.Int64 `json:"commentCount"`
	CommentCountS sources.Int64 `json:"comment_count"`
	ShareCount    sources.Int64 `json:"shareCount"`
	ShareCountS   sources.Int64 `json:"share_count"`
}

type videoWire struct {
	ID            sources.Text               `json:"id"`
	AwemeID       sources.Text               `json:"aweme_id"`
	VideoID       sources.Text               `json:"video_id"`
	Desc          sources.Text               `json:"desc"`
	CreateTime    sources.UnixTime           `json:"createTime"`
	CreateTimeS   sources.UnixTime           `json:"create_time"`
	CreateTimeUTC sources.UnixTime           `json:"create_time_utc"`
	Author        sources.Object[authorWire] `json:"author"`
	Stats         sources.Object[statsWire]  `json:"stats"`
	Statistics    sources.Object[statsWire]  `json:"statistics"`
	Music         sources.Object[struct {
		ID    sources.Text `json:"id"`
		IDStr sources.Text `json:"id_str"`
	}] `json:"music"`
	MusicID   sources.Text   `json:"musicId"`
	MusicIDS  sources.Text   `json:"music_id"`
	AwemeInfo sources.RawRef `json:"aweme_info"`
	URL       sources.Text   `json:"url"`
	ShareURL  sources.Text   `json:"share_url"`
	ChaList   sources.RawRef `json:"cha_list"`
}

func (v *Video) UnmarshalJSON(b []byte) error { return v.decode(b, true) }

// decode reads a video; unwrap lets it look inside one aweme_info, and only
// one: a video wrapped in thousands of them is not re-parsed per level.
func (v *Video) decode(b []byte, unwrap bool) error {
	var w videoWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return v.fromWire(&w, unwrap)
}

// fromWire sets v from a decoded entry.
func (v *Video) fromWire(w *videoWire, unwrap bool) error {
	if unwrap && len(w.AwemeInfo) > 0 && w.AwemeInfo[0] == '{' && w.ID == "" && w.AwemeID == "" {
		return v.decode(w.AwemeInfo, false) // a search entry {type, aweme_info: {...}}
	}
	a, s, st := w.Author.V, w.Stats.V, w.Statistics.V
	*v = Video{
		ID:         sources.FirstText(w.ID, w.AwemeID, w.VideoID),
		Desc:       w.Desc,
		CreateTime: sources.FirstTime(w.CreateTime, w.CreateTimeS, w.CreateTimeUTC),
		Author: Author{
			UniqueID: sources.FirstText(a.UniqueID, a.UniqueIDS),
			Nickname: a.Nickname,
			UID:      sources.FirstText(a.UID, a.ID),
			SecUID:   sources.FirstText(a.SecUID, a.SecUIDS),
		},
		Stats: VideoStats{
			PlayCount:    sources.FirstInt(s.PlayCount, s.PlayCountS, st.PlayCount, st.PlayCountS),
			DiggCount:    sources.FirstInt(s.DiggCount, s.DiggCountS, st.DiggCount, st.DiggCountS),
			CommentCount: sources.FirstInt(s.CommentCount, s.CommentCountS, st.CommentCount, st.CommentCountS),
			ShareCount:   sources.FirstInt(s.ShareCount, s.ShareCountS, st.ShareCount, st.ShareCountS),
		},
		MusicID: sources.FirstText(w.MusicID, w.MusicIDS, w.Music.V.IDStr, w.Music.V.ID),
		URL:     sources.FirstText(w.URL, withoutQuery(w.ShareURL)),
	}
	// The video's hashtags, leniently: a list that is not one, or an entry
	// without a name, costs only the hashtags, never the video.
	var tags []sources.RawRef
	if len(w.ChaList) > 0 && json.Unmarshal(w.ChaList, &tags) == nil {
		for _, r := range tags {
			var g Tag
			if json.Unmarshal(r, &g) == nil && g.Name != "" {
				v.Hashtags = append(v.Hashtags, g)
			}
		}
	}
	return nil
}

// withoutQuery is a URL without its query and fragment (a share link's
// tracking parameters), as it was sent when it does not parse.
func withoutQuery(u sources.Text) sources.Text {
	p, err := url.Parse(string(u))
	if err != nil || p.RawQuery == "" && p.Fragment == "" {
		return u
	}
	p.RawQuery, p.Fragment = "", ""
	return sources.Text(p.String())
}

// videoListKeys are the members a list of videos is found under: the
// contract's "videos", then the platform's own names.
var videoListKeys = []string{"videos", "search_item_list", "aweme_list", "itemList"}
