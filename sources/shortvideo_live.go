package sources

import (
	"encoding/json"
	"net/url"
)

// SVLive is the response of /shortvideo/user/live: a flat object. When the
// account is not live, IsLive is false and the other fields are zero.
type SVLive struct {
	IsLive      Flag
	Title       Text
	ViewerCount Int64
	StartTime   Int64 // Unix seconds
	Credits     Credits
	Raw         json.RawMessage
}

func (l *SVLive) UnmarshalJSON(b []byte) error {
	var w struct {
		IsLive       Flag  `json:"isLive"`
		IsLiveS      Flag  `json:"is_live"`
		Title        Text  `json:"title"`
		ViewerCount  Int64 `json:"viewerCount"`
		ViewerCountS Int64 `json:"viewer_count"`
		StartTime    Int64 `json:"startTime"`
		StartTimeS   Int64 `json:"start_time"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*l = SVLive{
		IsLive:      firstFlag(w.IsLive, w.IsLiveS),
		Title:       w.Title,
		ViewerCount: firstInt(w.ViewerCount, w.ViewerCountS),
		StartTime:   firstInt(w.StartTime, w.StartTimeS),
	}
	return nil
}

// SVLiveCall calls /shortvideo/user/live.
func SVLiveCall(handle string) Call[*SVLive] {
	return objectCall(ShortVideo, "/user/live", url.Values{"handle": {NormalizeHandle(handle)}}, decodeInto(func(a *answer, l *SVLive) error {
		return decodeObject(a, l, &l.Raw, &l.Credits)
	}))
}
