package endpoints

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sources"
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

// songWire is a song in either spelling. The real service's id is a JSON
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
		ID:         sources.FirstText(w.IDStr, w.ID),
		Title:      w.Title,
		AuthorName: sources.FirstText(w.AuthorName, w.AuthorNameS, Text(w.Author)),
		Duration:   w.Duration,
		UsageCount: sources.FirstInt(w.UsageCount, w.UsageCountS, w.UserCount),
		CoverLarge: sources.FirstText(Text(w.CoverLarge), Text(w.CoverLargeS)),
		CoverThumb: sources.FirstText(Text(w.CoverThumb), Text(w.CoverThumbS)),
	}
	return nil
}

// SVSongCall calls /shortvideo/song.
func SVSongCall(songID string) sources.Call[*SVSong] {
	return sources.ObjectCall(sources.ShortVideo, "/song", url.Values{"id": {strings.TrimSpace(songID)}}, sources.DecodeInto(func(a *sources.Answer, s *SVSong) error {
		return sources.DecodeObject(a, s, &s.Raw, &s.Credits)
	}))
}

// SVSongVideosCall calls one page of /shortvideo/song/videos.
func SVSongVideosCall(songID, cursor string) sources.Call[*sources.Page[SVVideo]] {
	return sources.PageCall[SVVideo](sources.ShortVideo, "/song/videos", sources.WithCursor(url.Values{"id": {strings.TrimSpace(songID)}}, cursor), svVideoListKeys...)
}

// softText is a display string (a name, a title) that some variant may send
// as an object: a string or number gives its text, anything else "" rather
// than failing the entry.
type softText Text

func (t *softText) UnmarshalJSON(b []byte) error {
	var s Text
	if s.UnmarshalJSON(b) != nil {
		s = ""
	}
	*t = softText(s)
	return nil
}

// imageURL is an image that arrives as a URL string (the contract) or as the
// platform's {uri, url_list: [...]} object (the real service), read as the
// first URL of the list.
type imageURL Text

func (u *imageURL) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return (*Text)(u).UnmarshalJSON(b)
	}
	var w struct {
		URLList []softText `json:"url_list"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*u = ""
	for _, s := range w.URLList {
		if s != "" {
			*u = imageURL(s)
			break
		}
	}
	return nil
}
