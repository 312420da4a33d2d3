package sources

import (
	"encoding/json"
	"net/url"
	"strings"
)

// SVSong is the response of /shortvideo/song: a flat object. Cover art other
// than CoverLarge and CoverThumb, and the play URL, stay in Raw.
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

func (s *SVSong) UnmarshalJSON(b []byte) error {
	var w struct {
		ID          Text  `json:"id"`
		IDStr       Text  `json:"id_str"`
		Title       Text  `json:"title"`
		AuthorName  Text  `json:"authorName"`
		AuthorNameS Text  `json:"author_name"`
		Duration    Int64 `json:"duration"`
		UsageCount  Int64 `json:"usageCount"`
		UsageCountS Int64 `json:"usage_count"`
		CoverLarge  Text  `json:"coverLarge"`
		CoverLargeS Text  `json:"cover_large"`
		CoverThumb  Text  `json:"coverThumb"`
		CoverThumbS Text  `json:"cover_thumb"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = SVSong{
		ID:         firstText(w.ID, w.IDStr),
		Title:      w.Title,
		AuthorName: firstText(w.AuthorName, w.AuthorNameS),
		Duration:   w.Duration,
		UsageCount: firstInt(w.UsageCount, w.UsageCountS),
		CoverLarge: firstText(w.CoverLarge, w.CoverLargeS),
		CoverThumb: firstText(w.CoverThumb, w.CoverThumbS),
	}
	return nil
}

// SVSongCall calls /shortvideo/song.
func SVSongCall(songID string) Call[*SVSong] {
	return objectCall(ShortVideo, "/song", url.Values{"id": {strings.TrimSpace(songID)}}, decodeInto(func(a *answer, s *SVSong) error {
		return decodeObject(a, s, &s.Raw, &s.Credits)
	}))
}

// SVSongVideosCall calls one page of /shortvideo/song/videos.
func SVSongVideosCall(songID, cursor string) Call[*Page[SVVideo]] {
	return pageCall[SVVideo](ShortVideo, "/song/videos", withCursor(url.Values{"id": {strings.TrimSpace(songID)}}, cursor), svVideoListKeys...)
}
