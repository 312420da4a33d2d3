package endpoints

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFollowPageCursor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body         string
		cursor       string
		more, known  bool
		items        int
		followingKey bool
	}{
		// the real service: min_time, has_more a boolean or absent
		{`{"followers":[{"unique_id":"a","sec_uid":"s","uid":"1"}],"has_more":true,"min_time":1737751140,"max_time":1737751376}`, "1737751140", true, true, 1, false},
		{`{"followers":[{"unique_id":"a"}],"min_time":1750289478,"total":4}`, "1750289478", false, false, 1, false},
		{`{"success":true,"credits_remaining":3,"followings":[{"unique_id":"a"},{"unique_id":"b"}],"has_more":0,"min_time":17}`, "17", false, true, 2, true},
		// the contract's cursor wins over a min_time beside it
		{`{"followers":[{"uniqueId":"a"}],"cursor":"c2","hasMore":true,"min_time":5}`, "c2", true, true, 1, false},
	} {
		call := SVFollowersCall("sec", "")
		if tc.followingKey {
			call = SVFollowingCall("sec", "")
		}
		p, err := call.Decode([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if p.Cursor != tc.cursor || p.HasMore != tc.more || p.HasMoreKnown != tc.known || len(p.Items) != tc.items {
			t.Errorf("%s: cursor %q more %v known %v items %d", tc.body, p.Cursor, p.HasMore, p.HasMoreKnown, len(p.Items))
		}
	}
	p, _ := SVFollowersCall("sec", "").Decode([]byte(`{"followers":[{"unique_id":"a","sec_uid":"s","uid":"1","follower_count":3}]}`))
	if e := p.Items[0].V; e.UniqueID != "a" || e.SecUID != "s" || e.UID != "1" || e.FollowerCount.V != 3 || e.Verified.Valid {
		t.Errorf("entry = %+v", e)
	}
	// min_time is a follow-list cursor only
	v, _ := SVSongVideosCall("1", "").Decode([]byte(`{"aweme_list":[{"aweme_id":"9"}],"min_time":5,"has_more":1}`))
	if v.Cursor != "" || !v.HasMore {
		t.Errorf("song videos: cursor %q more %v", v.Cursor, v.HasMore)
	}
}

func TestRealVideos(t *testing.T) {
	t.Parallel()
	body := `{"aweme_list":[{"aweme_id":"75","desc":"d","create_time":1755543133,
		"statistics":{"play_count":10,"digg_count":2,"comment_count":1,"share_count":0},
		"author":{"uid":"67","nickname":"Bre","sec_uid":"MS4w"},"music":{"id":6840839890826038000,"id_str":"6840839890826038022"}},
		{"aweme_id":"76","create_time_utc":"2025-09-03T18:37:38.000Z","author":{"unique_id":"h"},"music":{"id":7110642235061947393}}]}`
	p, err := SVTrendingFeedCall().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []SVVideo{
		{ID: "75", Desc: "d", CreateTime: Int64{V: 1755543133, Valid: true}, Author: SVAuthor{Nickname: "Bre", UID: "67", SecUID: "MS4w"},
			Stats: SVVideoStats{Int64{V: 10, Valid: true}, Int64{V: 2, Valid: true}, Int64{V: 1, Valid: true}, Int64{V: 0, Valid: true}}, MusicID: "6840839890826038022"},
		{ID: "76", CreateTime: Int64{V: 1756924658, Valid: true}, Author: SVAuthor{UniqueID: "h"}, MusicID: "7110642235061947393"},
	}
	if len(p.Items) != 2 || !reflect.DeepEqual(p.Items[0].V, want[0]) || !reflect.DeepEqual(p.Items[1].V, want[1]) {
		t.Errorf("videos = %+v", p.Items)
	}
}

func TestRealSearches(t *testing.T) {
	t.Parallel()
	h, err := SVHashtagSearchCall("fyp", "").Decode([]byte(`{"aweme_list":[{"aweme_id":"68","desc":"x","author":{"unique_id":"b"}}],"cursor":12,"has_more":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Items) != 1 || h.Items[0].V.Video == nil || h.Items[0].V.Video.ID != "68" || h.Items[0].V.Name != "" || h.Cursor != "12" || !h.HasMore {
		t.Errorf("hashtag search = %+v", h)
	}
	top, err := SVTopSearchCall("dogs", "").Decode([]byte(`{"success":true,"items":[
		{"id":"76","content_type":"multi_photo","create_time":"2026-03-24T04:25:45.000Z","author":{"unique_id":"k"}},
		{"id":"77","content_type":"video","create_time":1}],"cursor":30}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Items) != 2 || top.Items[0].V.Type != "video" || top.Items[0].V.Video.CreateTime.V != 1774326345 ||
		top.Items[0].V.Video.Author.UniqueID != "k" || top.Items[1].V.Video.ID != "77" || top.Cursor != "30" || top.HasMoreKnown {
		t.Errorf("top search = %+v", top)
	}
	kw, err := SVKeywordSearchCall(KeywordQuery{Query: "x"}, "").Decode([]byte(`{"cursor":12,"search_item_list":[
		{"aweme_info":{"aweme_id":"1","author":{"unique_id":"a"}}},{"aweme_id":"2","create_time_utc":"2023-08-17T13:48:40.000Z"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(kw.Items) != 2 || kw.Items[0].V.ID != "1" || kw.Items[0].V.Author.UniqueID != "a" || kw.Items[1].V.CreateTime.V != 1692280120 {
		t.Errorf("keyword search = %+v", kw.Items)
	}
}

func TestRealSong(t *testing.T) {
	t.Parallel()
	for body, id := range map[string]Text{
		`{"music_info":{"id":6717159721276541000,"id_str":"6717159721276540930","title":"T","author":"A","duration":60,"user_count":358,
			"cover_large":{"uri":"u","url_list":["https://l"]},"cover_thumb":{"url_list":[]}},"status_code":0}`: "6717159721276540930",
		`{"music_info":{"id":6717159721276540930,"title":"T","author":"A","duration":60,"user_count":358,"cover_large":{"url_list":["https://l"]}}}`: "6717159721276540930",
	} {
		s, err := SVSongCall("1").Decode([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if s.ID != id || s.Title != "T" || s.AuthorName != "A" || s.Duration.V != 60 || s.UsageCount.V != 358 || s.CoverLarge != "https://l" || s.CoverThumb != "" {
			t.Errorf("song = %+v", s)
		}
	}
}

func TestRealLiveAndCreators(t *testing.T) {
	t.Parallel()
	l, err := SVLiveCall("a").Decode([]byte(`{"success":true,"is_live":true,"liveRoomUserInfo":{"uniqueId":"a"},
		"liveRoom":{"title":"T","startTime":1751744708,"liveRoomStats":{"enterCount":30960,"userCount":804}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !l.IsLive.V || l.Title != "T" || l.ViewerCount.V != 804 || l.StartTime.V != 1751744708 {
		t.Errorf("live = %+v", l)
	}
	p, err := SVPopularCreatorsCall().Decode([]byte(`{"creators":[{"user_id":"66","nick_name":"S","follower_cnt":431339,"tt_link":"https://www.tiktok.com/@saniev?lang=en"},
		{"user_id":"67","tt_link":"https://www.tiktok.com/music/x"}],"pagination":{"has_more":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []SVCreator{{UniqueID: "saniev", UserID: "66", Nickname: "S", FollowerCount: Int64{V: 431339, Valid: true}}, {UserID: "67"}}
	if len(p.Items) != 2 || !reflect.DeepEqual(p.Items[0].V, want[0]) || !reflect.DeepEqual(p.Items[1].V, want[1]) {
		t.Errorf("creators = %+v", p.Items)
	}
}

// A video's hashtags (cha_list) and its web address (url, else share_url
// without its tracking query) are read; a hashtag list that is no list, or
// an entry without a name, costs only the hashtags.
func TestVideoHashtagsAndURL(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]SVVideo{
		`{"aweme_id":"7","share_url":"https://www.tiktok.com/@a/video/7?_r=1&u_code=x","cha_list":[{"cha_name":"fyp","cid":"229207"},{"cid":"1"},null]}`: {
			ID: "7", URL: "https://www.tiktok.com/@a/video/7", Hashtags: []SVTag{{Name: "fyp", ID: "229207"}}},
		`{"aweme_id":"8","url":"https://www.tiktok.com/@a/video/8","share_url":"https://x/?y=1","cha_list":{"cha_name":"odd"}}`: {
			ID: "8", URL: "https://www.tiktok.com/@a/video/8"},
		`{"id":"9","desc":"d","cha_list":null}`: {ID: "9", Desc: "d"},
	} {
		var v SVVideo
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		for i := range v.Hashtags {
			v.Hashtags[i].Raw = nil
		}
		if !reflect.DeepEqual(v, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", body, v, want)
		}
	}
}
