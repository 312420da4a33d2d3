package endpoints

import (
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// SVVideo is a video of the short-video platform, as listed by the keyword
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
type SVVideo struct {
	ID         Text
	Desc       Text
	CreateTime Int64
	Author     SVAuthor
	Stats      SVVideoStats
	MusicID    Text
	// URL is the video's web address when the answer carries one (the real
	// service's url, else its share_url without the query); "" otherwise.
	URL Text
	// Hashtags are the hashtags the video carries (the real service's
	// cha_list), each with its raw JSON; the contract's videos carry none.
	Hashtags []SVTag
}

// SVTag is a hashtag a video carries: its name without #, its id when sent.
type SVTag struct {
	Name Text
	ID   Text
	Raw  json.RawMessage
}

func (g *SVTag) UnmarshalJSON(b []byte) error {
	var w struct {
		ChaName Text `json:"cha_name"`
		Name    Text `json:"hashtag_name"`
		CID     Text `json:"cid"`
		ID      Text `json:"hashtag_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*g = SVTag{Name: sources.FirstText(w.ChaName, w.Name), ID: sources.FirstText(w.CID, w.ID), Raw: json.RawMessage(b)}
	return nil
}

// SVAuthor is the author of a video. Some lists (the real trending feed)
// send no handle, only the ids: UID and SecUID.
type SVAuthor struct {
	UniqueID Text
	Nickname Text
	UID      Text
	SecUID   Text
}

type svAuthorWire struct {
	UniqueID  Text `json:"uniqueId"`
	UniqueIDS Text `json:"unique_id"`
	Nickname  Text `json:"nickname"`
	ID        Text `json:"id"`
	UID       Text `json:"uid"`
	SecUID    Text `json:"secUid"`
	SecUIDS   Text `json:"sec_uid"`
}

// SVVideoStats are the counters of a video.
type SVVideoStats struct {
	PlayCount    Int64
	DiggCount    Int64
	CommentCount Int64
	ShareCount   Int64
}

type svStatsWire struct {
	PlayCount     Int64 `json:"playCount"`
	PlayCountS    Int64 `json:"play_count"`
	DiggCount     Int64 `json:"diggCount"`
	DiggCountS    Int64 `json:"digg_count"`
	CommentCount  Int64 `json:"commentCount"`
	CommentCountS Int64 `json:"comment_count"`
	ShareCount    Int64 `json:"shareCount"`
	ShareCountS   Int64 `json:"share_count"`
}

type svVideoWire struct {
	ID            Text                 `json:"id"`
	AwemeID       Text                 `json:"aweme_id"`
	VideoID       Text                 `json:"video_id"`
	Desc          Text                 `json:"desc"`
	CreateTime    UnixTime             `json:"createTime"`
	CreateTimeS   UnixTime             `json:"create_time"`
	CreateTimeUTC UnixTime             `json:"create_time_utc"`
	Author        Object[svAuthorWire] `json:"author"`
	Stats         Object[svStatsWire]  `json:"stats"`
	Statistics    Object[svStatsWire]  `json:"statistics"`
	Music         Object[struct {
		ID    Text `json:"id"`
		IDStr Text `json:"id_str"`
	}] `json:"music"`
	MusicID   Text   `json:"musicId"`
	MusicIDS  Text   `json:"music_id"`
	AwemeInfo RawRef `json:"aweme_info"`
	URL       Text   `json:"url"`
	ShareURL  Text   `json:"share_url"`
	ChaList   RawRef `json:"cha_list"`
}

func (v *SVVideo) UnmarshalJSON(b []byte) error { return v.decode(b, true) }

// decode reads a video; unwrap lets it look inside one aweme_info, and only
// one: a video wrapped in thousands of them is not re-parsed per level.
func (v *SVVideo) decode(b []byte, unwrap bool) error {
	var w svVideoWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return v.fromWire(&w, unwrap)
}

// fromWire sets v from a decoded entry.
func (v *SVVideo) fromWire(w *svVideoWire, unwrap bool) error {
	if unwrap && len(w.AwemeInfo) > 0 && w.AwemeInfo[0] == '{' && w.ID == "" && w.AwemeID == "" {
		return v.decode(w.AwemeInfo, false) // a search entry {type, aweme_info: {...}}
	}
	a, s, st := w.Author.V, w.Stats.V, w.Statistics.V
	*v = SVVideo{
		ID:         sources.FirstText(w.ID, w.AwemeID, w.VideoID),
		Desc:       w.Desc,
		CreateTime: sources.FirstTime(w.CreateTime, w.CreateTimeS, w.CreateTimeUTC),
		Author: SVAuthor{
			UniqueID: sources.FirstText(a.UniqueID, a.UniqueIDS),
			Nickname: a.Nickname,
			UID:      sources.FirstText(a.UID, a.ID),
			SecUID:   sources.FirstText(a.SecUID, a.SecUIDS),
		},
		Stats: SVVideoStats{
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
	var tags []RawRef
	if len(w.ChaList) > 0 && json.Unmarshal(w.ChaList, &tags) == nil {
		for _, r := range tags {
			var g SVTag
			if json.Unmarshal(r, &g) == nil && g.Name != "" {
				v.Hashtags = append(v.Hashtags, g)
			}
		}
	}
	return nil
}

// withoutQuery is a URL without its query and fragment (a share link's
// tracking parameters), as it was sent when it does not parse.
func withoutQuery(u Text) Text {
	p, err := url.Parse(string(u))
	if err != nil || p.RawQuery == "" && p.Fragment == "" {
		return u
	}
	p.RawQuery, p.Fragment = "", ""
	return Text(p.String())
}

// videoListKeys are the members a list of videos is found under: the
// contract's "videos", then the platform's own names.
var svVideoListKeys = []string{"videos", "search_item_list", "aweme_list", "itemList"}
