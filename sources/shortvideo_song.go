package sources

import (
	"encoding/json"
	"net/url"
	"strings"
)

// SVSong is the response of /shortvideo/song: a flat object on the
// contract, wrapped in music_info on the real service. Cover art other than
// CoverLarge and CoverThumb, and the play URL, stay in Raw.
type SVSong struct {
	ID         Text
	Title      Text
	AuthorName Text
	Duration   Int64 // seconds
	UsageCount Int64 // videos using the sound; drifts upward
	CoverLarge Text
	CoverThumb Text
	Credits    Credits
	Raw        json.RawMessage
}

// svSongWire is a song in either spelling. The real service's id is a JSON
// number beyond float64's precision, with its exact digits in id_str: id_str
// is read first, and id as Text keeps a number's digits as sent. Its covers
// are {uri, url_list} objects and its author a plain name.
type svSongWire struct {
	ID          Text     `json:"id"`
	IDStr       Text     `json:"id_str"`
	Title       Text     `json:"title"`
	AuthorName  Text     `json:"authorName"`
	AuthorNameS Text     `json:"author_name"`
	Author      softText `json:"author"`
	Duration    Int64    `json:"duration"`
	UsageCount  Int64    `json:"usageCount"`
	UsageCountS Int64    `json:"usage_count"`
	UserCount   Int64    `json:"user_count"`
	CoverLarge  imageURL `json:"coverLarge"`
	CoverLargeS imageURL `json:"cover_large"`
	CoverThumb  imageURL `json:"coverThumb"`
	CoverThumbS imageURL `json:"cover_thumb"`
	MusicInfo   RawRef   `json:"music_info"`
}

func (s *SVSong) UnmarshalJSON(b []byte) error {
	var w svSongWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if info := w.MusicInfo; len(info) > 0 && info[0] == '{' && w.ID == "" && w.IDStr == "" {
		w = svSongWire{}
		if err := json.Unmarshal(info, &w); err != nil {
			return err
		}
	}
	*s = SVSong{
		ID:         FirstText(w.IDStr, w.ID),
		Title:      w.Title,
		AuthorName: FirstText(w.AuthorName, w.AuthorNameS, Text(w.Author)),
		Duration:   w.Duration,
		UsageCount: FirstInt(w.UsageCount, w.UsageCountS, w.UserCount),
		CoverLarge: FirstText(Text(w.CoverLarge), Text(w.CoverLargeS)),
		CoverThumb: FirstText(Text(w.CoverThumb), Text(w.CoverThumbS)),
	}
	return nil
}

// SVSongCall calls /shortvideo/song.
func SVSongCall(songID string) Call[*SVSong] {
	return ObjectCall(ShortVideo, "/song", url.Values{"id": {strings.TrimSpace(songID)}}, DecodeInto(func(a *Answer, s *SVSong) error {
		return DecodeObject(a, s, &s.Raw, &s.Credits)
	}))
}

// SVSongVideosCall calls one page of /shortvideo/song/videos.
func SVSongVideosCall(songID, cursor string) Call[*Page[SVVideo]] {
	return PageCall[SVVideo](ShortVideo, "/song/videos", WithCursor(url.Values{"id": {strings.TrimSpace(songID)}}, cursor), svVideoListKeys...)
}
