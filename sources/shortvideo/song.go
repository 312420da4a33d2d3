package shortvideo

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

// Song is the response of /shortvideo/song: a flat object on the
// contract, wrapped in music_info on the real service. Cover art other than
// CoverLarge and CoverThumb, and the play URL, stay in Raw.
type Song struct {
	ID         sources.Text
	Title      sources.Text
	AuthorName sources.Text
	Duration   sources.Int64 // seconds
	UsageCount sources.Int64 // videos using the sound; drifts upward
	CoverLarge sources.Text
	CoverThumb sources.Text
	Credits    sources.Credits
	Raw        json.RawMessage
}

// songWire is a song in either spelling. The real service's id is a JSON
// number beyond float64's precision, with its exact digits in id_str: id_str
// is read first, and id as Text keeps a number's digits as sent. Its covers
// are {uri, url_list} objects and its author a plain name.
type songWire struct {
	ID          sources.Text   `json:"id"`
	IDStr       sources.Text   `json:"id_str"`
	Title       sources.Text   `json:"title"`
	AuthorName  sources.Text   `json:"authorName"`
	AuthorNameS sources.Text   `json:"author_name"`
	Author      softText       `json:"author"`
	Duration    sources.Int64  `json:"duration"`
	UsageCount  sources.Int64  `json:"usageCount"`
	UsageCountS sources.Int64  `json:"usage_count"`
	UserCount   sources.Int64  `json:"user_count"`
	CoverLarge  imageURL       `json:"coverLarge"`
	CoverLargeS imageURL       `json:"cover_large"`
	CoverThumb  imageURL       `json:"coverThumb"`
	CoverThumbS imageURL       `json:"cover_thumb"`
	MusicInfo   sources.RawRef `json:"music_info"`
}

func (s *Song) UnmarshalJSON(b []byte) error {
	var w songWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if info := w.MusicInfo; len(info) > 0 && info[0] == '{' && w.ID == "" && w.IDStr == "" {
		w = songWire{}
		if err := json.Unmarshal(info, &w); err != nil {
			return err
		}
	}
	*s = Song{
		ID:         sources.FirstText(w.IDStr, w.ID),
		Title:      w.Title,
		AuthorName: sources.FirstText(w.AuthorName, w.AuthorNameS, sources.Text(w.Author)),
		Duration:   w.Duration,
		UsageCount: sources.FirstInt(w.UsageCount, w.UsageCountS, w.UserCount),
		CoverLarge: sources.FirstText(sources.Text(w.CoverLarge), sources.Text(w.CoverLargeS)),
		CoverThumb: sources.FirstText(sources.Text(w.CoverThumb), sources.Text(w.CoverThumbS)),
	}
	return nil
}

// SongCall calls /shortvideo/song.
func SongCall(songID string) sources.Call[*Song] {
	return sources.ObjectCall(sources.ShortVideo, "/song", url.Values{"id": {strings.TrimSpace(songID)}}, sources.DecodeInto(func(a *sources.Answer, s *Song) error {
		return sources.DecodeObject(a, s, &s.Raw, &s.Credits)
	}))
}

// SongVideosCall calls one page of /shortvideo/song/videos.
func SongVideosCall(songID, cursor string) sources.Call[*sources.Page[Video]] {
	return sources.PageCall[Video](sources.ShortVideo, "/song/videos", sources.WithCursor(url.Values{"id": {strings.TrimSpace(songID)}}, cursor), videoListKeys...)
}

// softText is a display string (a name, a title) that some variant may send
// as an object: a string or number gives its text, anything else "" rather
// than failing the entry.
type softText sources.Text

func (t *softText) UnmarshalJSON(b []byte) error {
	var s sources.Text
	if s.UnmarshalJSON(b) != nil {
		s = ""
	}
	*t = softText(s)
	return nil
}

// imageURL is an image that arrives as a URL string (the contract) or as the
// platform's {uri, url_list: [...]} object (the real service), read as the
// first URL of the list.
type imageURL sources.Text

func (u *imageURL) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return (*sources.Text)(u).UnmarshalJSON(b)
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
