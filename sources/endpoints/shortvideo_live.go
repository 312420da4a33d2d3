package endpoints

import (
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// SVLive is the response of /shortvideo/user/live: a flat object on the
// contract; on the real service a top-level is_live with the room in
// liveRoom {title, startTime, liveRoomStats{userCount}} and the account in
// liveRoomUserInfo. When the account is not live, IsLive is false and the
// other fields are zero.
type SVLive struct {
	IsLive      Flag
	Title       Text
	ViewerCount Int64
	StartTime   Int64 // Unix seconds
	Credits     Credits
	Raw         json.RawMessage
}

// liveRoom is the real service's liveRoom object.
type svLiveRoom struct {
	Title     Text     `json:"title"`
	StartTime UnixTime `json:"startTime"`
	Stats     Object[struct {
		UserCount Int64 `json:"userCount"`
	}] `json:"liveRoomStats"`
}

func (l *SVLive) UnmarshalJSON(b []byte) error {
	var w struct {
		IsLive       Flag               `json:"isLive"`
		IsLiveS      Flag               `json:"is_live"`
		Title        Text               `json:"title"`
		ViewerCount  Int64              `json:"viewerCount"`
		ViewerCountS Int64              `json:"viewer_count"`
		StartTime    UnixTime           `json:"startTime"`
		StartTimeS   UnixTime           `json:"start_time"`
		Room         Object[svLiveRoom] `json:"liveRoom"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	room := w.Room.V
	*l = SVLive{
		IsLive:      sources.FirstFlag(w.IsLive, w.IsLiveS),
		Title:       sources.FirstText(w.Title, room.Title),
		ViewerCount: sources.FirstInt(w.ViewerCount, w.ViewerCountS, room.Stats.V.UserCount),
		StartTime:   sources.FirstTime(w.StartTime, w.StartTimeS, room.StartTime),
	}
	return nil
}

// SVLiveCall calls /shortvideo/user/live.
func SVLiveCall(handle string) sources.Call[*SVLive] {
	return sources.ObjectCall(sources.ShortVideo, "/user/live", url.Values{"handle": {sources.NormalizeHandle(handle)}}, sources.DecodeInto(func(a *sources.Answer, l *SVLive) error {
		return sources.DecodeObject(a, l, &l.Raw, &l.Credits)
	}))
}
