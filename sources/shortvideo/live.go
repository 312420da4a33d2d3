package shortvideo

import (
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// Live is the response of /shortvideo/user/live: a flat object on the
// contract; on the real service a top-level is_live with the room in
// liveRoom {title, startTime, liveRoomStats{userCount}} and the account in
// liveRoomUserInfo. When the account is not live, IsLive is false and the
// other fields are zero.
type Live struct {
	IsLive      sources.Flag
	Title       sources.Text
	ViewerCount sources.Int64
	StartTime   sources.Int64 // Unix seconds
	Credits     sources.Credits
	Raw         json.RawMessage
}

// liveRoom is the real service's liveRoom object.
type liveRoom struct {
	Title     sources.Text     `json:"title"`
	StartTime sources.UnixTime `json:"startTime"`
	Stats     sources.Object[struct {
		UserCount sources.Int64 `json:"userCount"`
	}] `json:"liveRoomStats"`
}

func (l *Live) UnmarshalJSON(b []byte) error {
	var w struct {
		IsLive       sources.Flag             `json:"isLive"`
		IsLiveS      sources.Flag             `json:"is_live"`
		Title        sources.Text             `json:"title"`
		ViewerCount  sources.Int64            `json:"viewerCount"`
		ViewerCountS sources.Int64            `json:"viewer_count"`
		StartTime    sources.UnixTime         `json:"startTime"`
		StartTimeS   sources.UnixTime         `json:"start_time"`
		Room         sources.Object[liveRoom] `json:"liveRoom"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	room := w.Room.V
	*l = Live{
		IsLive:      sources.FirstFlag(w.IsLive, w.IsLiveS),
		Title:       sources.FirstText(w.Title, room.Title),
		ViewerCount: sources.FirstInt(w.ViewerCount, w.ViewerCountS, room.Stats.V.UserCount),
		StartTime:   sources.FirstTime(w.StartTime, w.StartTimeS, room.StartTime),
	}
	return nil
}

// LiveCall calls /shortvideo/user/live.
func LiveCall(handle string) sources.Call[*Live] {
	return sources.ObjectCall(sources.ShortVideo, "/user/live", url.Values{"handle": {sources.NormalizeHandle(handle)}}, sources.DecodeInto(func(a *sources.Answer, l *Live) error {
		return sources.DecodeObject(a, l, &l.Raw, &l.Credits)
	}))
}
