package sandbox

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// JSON kinds of the contract, as upstream-api.md names them.
const (
	tString  = "string"
	tBool    = "boolean"
	tInt     = "integer"
	tObject  = "object"
	tArray   = "array"
	tNull    = "null"
	tAbsent  = "absent"
	tNullStr = "string|null"
)

// endpointContract is one endpoint call and the fields its answer must carry. Field
// paths are dotted; "name[]" descends into every element of an array (which
// must not be empty) and "name[k=v]" into the elements whose k is v.
type endpointContract struct {
	name   string
	path   string
	query  string
	fields map[string]string
}

// secUID of a handle, computed here from the documented rule rather than
// taken from the server.
func secUIDFor(handle string) string { return "MS4wLjABAAAA" + b64(handle) }

var videoFields = map[string]string{
	"videos":                    tArray,
	"videos[].id":               tString,
	"videos[].desc":             tString,
	"videos[].stats":            tObject,
	"videos[].stats.playCount":  tInt,
	"videos[].stats.diggCount":  tInt,
	"videos[].author":           tObject,
	"videos[].author.uniqueId":  tString,
	"videos[].author.nickname":  tString,
	"videos[].createTime":       tInt,
	"videos[].stats.shareCount": tInt,
}

func with(base map[string]string, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

var pagedFields = map[string]string{"cursor": tString, "hasMore": tBool}

func contracts() []endpointContract {
	followEntry := func(list string) map[string]string {
		return with(pagedFields, map[string]string{
			list:                 tArray,
			list + "[].uniqueId": tString,
			list + "[].nickname": tString,
			list + "[].verified": tBool,
			list + "[].secUid":   tString,
		})
	}
	return []endpointContract{
		{"1 keyword search form A", "/shortvideo/search/keyword", "keyword=cats_n3", with(videoFields, pagedFields)},
		{"1 keyword search form B", "/shortvideo/search/keyword", "query=cats+n3&sort_by=most-liked", with(videoFields,
			map[string]string{"cursor": tInt, "hasMore": tBool})},
		{"1 keyword search form B trimmed", "/shortvideo/search/keyword", "query=cats+n3&trim=true", map[string]string{
			"videos": tArray, "videos[].id": tString, "videos[].desc": tString,
			"videos[].stats.playCount": tInt, "videos[].stats.diggCount": tAbsent,
			"videos[].author.uniqueId": tString, "videos[].author.nickname": tAbsent,
			"videos[].createTime": tAbsent, "cursor": tInt, "hasMore": tBool,
		}},
		{"2 hashtag search", "/shortvideo/search/hashtag", "keyword=dance_n4", with(pagedFields, map[string]string{
			"hashtags": tArray, "hashtags[].name": tString, "hashtags[].viewCount": tInt,
			"hashtags[].videoCount": tInt, "hashtags[].growth.views7d": tInt, "hashtags[].growth.videos7d": tInt,
		})},
		{"3 top search", "/shortvideo/search/top", "keyword=mixed+n8", with(pagedFields, map[string]string{
			"results": tArray, "results[].type": tString,
			"results[type=video].id": tString, "results[type=video].desc": tString,
			"results[type=video].stats.playCount": tInt, "results[type=video].author.uniqueId": tString,
			"results[type=user].uniqueId": tString, "results[type=user].nickname": tString,
			"results[type=hashtag].name": tString, "results[type=hashtag].viewCount": tInt,
			"results[type=sound].id": tString, "results[type=sound].title": tString,
		})},
		{"4 followers", "/shortvideo/user/followers", "secUid=" + secUIDFor("bob_f3"), followEntry("followers")},
		{"5 following", "/shortvideo/user/following", "secUid=" + secUIDFor("bob_g3"), followEntry("following")},
		{"6 song videos", "/shortvideo/song/videos", "id=song_v3", with(videoFields, pagedFields)},
		{"7 song", "/shortvideo/song", "id=song_v3", map[string]string{
			"id": tString, "title": tString, "authorName": tString, "duration": tInt, "usageCount": tInt,
			"coverLarge": tString, "coverThumb": tString, "success": tAbsent,
		}},
		{"8 trending feed", "/shortvideo/get-trending-feed", "", with(videoFields, map[string]string{"cursor": tAbsent, "hasMore": tAbsent})},
		{"9 popular videos", "/shortvideo/videos/popular", "", with(videoFields, map[string]string{"cursor": tAbsent, "hasMore": tAbsent})},
		{"10 popular creators", "/shortvideo/creators/popular", "", map[string]string{
			"creators": tArray, "creators[].uniqueId": tString, "creators[].nickname": tString,
			"creators[].followerCount": tInt, "creators[].verified": tBool, "cursor": tAbsent, "hasMore": tAbsent,
		}},
		{"11 profile", "/shortvideo/profile", "handle=alice", map[string]string{
			"success": tBool, "user": tObject, "user.id": tString, "user.uniqueId": tString, "user.nickname": tString,
			"user.avatarLarger": tString, "user.signature": tString, "user.verified": tBool,
			"user.privateAccount": tBool, "user.secUid": tString,
			"stats.followerCount": tInt, "stats.followingCount": tInt, "stats.heartCount": tInt,
			"stats.videoCount": tInt, "stats.diggCount": tInt,
			"itemList": tArray, "itemList[].id": tString, "itemList[].author.uniqueId": tString,
		}},
		{"12 live status (live)", "/shortvideo/user/live", "handle=carol_live", map[string]string{
			"isLive": tBool, "title": tString, "viewerCount": tInt, "startTime": tInt, "success": tAbsent,
		}},
		{"12 live status (offline)", "/shortvideo/user/live", "handle=carol", map[string]string{
			"isLive": tBool, "title": tString, "viewerCount": tInt, "startTime": tInt,
		}},
		{"13 photo profile (business)", "/photosocial/profile", "handle=shop_business", map[string]string{
			"success": tBool, "data": tObject, "data.user": tObject, "data.user.id": tString,
			"data.user.username": tString, "data.user.full_name": tString, "data.user.biography": tString,
			"data.user.edge_followed_by.count": tInt, "data.user.edge_follow.count": tInt,
			"data.user.is_verified": tBool, "data.user.is_business_account": tBool,
			"data.user.category_name": tString, "data.user.edge_owner_to_timeline_media.count": tInt,
			"data.user.business_email": tString, "data.user.business_phone_number": tString,
			"data.user.public_email": tString, "data.user.public_phone_number": tString,
		}},
		{"13 photo profile (personal)", "/photosocial/profile", "handle=dave", map[string]string{
			"data.user.category_name": tNull, "data.user.is_business_account": tBool,
			"data.user.business_email": tNull, "data.user.business_phone_number": tNull,
			"data.user.public_email": tNull, "data.user.public_phone_number": tNull,
			"data.user.edge_followed_by.count": tInt,
		}},
		{"14 post comments", "/photosocial/post/comments", "url=https://www.photosocial.example/p/abc_c3/", map[string]string{
			"success": tBool, "comments": tArray, "comments[].text": tString, "comments[].user.username": tString,
			"comments[].created_at": tInt, "comments[].like_count": tInt, "comments[].child_comment_count": tInt,
			"comments[].id": tString, "cursor": tString, "hasMore": tAbsent,
		}},
		{"15 reels search", "/photosocial/reels/search", "query=surf+n3", map[string]string{
			"success": tBool, "reels": tArray, "reels[].id": tString, "reels[].code": tString,
			"reels[].owner.username": tString, "reels[].play_count": tInt, "reels[].like_count": tInt,
			"reels[].caption": tString, "cursor": tAbsent,
		}},
		{"16 transcript", "/photosocial/media/transcript", "url=https://www.photosocial.example/reel/xyz_t2/", map[string]string{
			"success": tBool, "transcripts": tArray, "transcripts[].id": tString,
			"transcripts[].shortcode": tString, "transcripts[].text": tString,
		}},
		{"17 embed", "/photosocial/user/embed", "handle=erin", map[string]string{"success": tBool, "html": tString}},
		{"18 highlight", "/photosocial/user/highlight/detail", "id=1797000000000012", map[string]string{
			"success": tBool, "id": tString, "title": tString, "media_count": tInt, "items": tArray,
			"items[].media_type": tInt, "items[].video_versions": tArray,
			"items[media_type=2].video_versions[].url": tString,
			"user.username": tString, "user.is_verified": tBool,
		}},
	}
}

func TestContract(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	seen := map[string]bool{}
	for _, c := range contracts() {
		seen[c.path] = true
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, body := b.get(t, c.path, c.query)
			if status != http.StatusOK {
				t.Fatalf("status %d, body %s", status, body)
			}
			doc := decode(t, body)
			if _, ok := doc.(map[string]any); !ok {
				t.Fatalf("body is not a JSON object: %s", body)
			}
			for path, want := range c.fields {
				checkField(t, doc, path, want)
			}
		})
	}
	if len(seen) != 18 {
		t.Errorf("contract table covers %d endpoints, want 18", len(seen))
	}
}

// decode keeps numbers as json.Number so integers can be told from floats.
func decode(t *testing.T, body []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return tNull
	case string:
		return tString
	case bool:
		return tBool
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "float"
		}
		if strings.HasPrefix(v.String(), "-") {
			return "negative integer"
		}
		return tInt
	case map[string]any:
		return tObject
	case []any:
		return tArray
	}
	return "unknown"
}

// checkField checks every value the path reaches.
func checkField(t *testing.T, doc any, path, want string) {
	t.Helper()
	values, absent := resolve(t, doc, strings.Split(path, "."), path)
	if want == tAbsent {
		if len(values) > 0 {
			t.Errorf("%s: present, want absent", path)
		}
		return
	}
	if absent {
		t.Errorf("%s: absent, want %s", path, want)
		return
	}
	for _, v := range values {
		got := kindOf(v)
		if got != want && !(want == tNullStr && (got == tNull || got == tString)) {
			t.Errorf("%s: %s (%v), want %s", path, got, v, want)
		}
	}
}

// resolve returns the values at path; absent reports a missing key.
func resolve(t *testing.T, v any, segs []string, full string) (values []any, absent bool) {
	t.Helper()
	if len(segs) == 0 {
		return []any{v}, false
	}
	seg := segs[0]
	name, filter, isArray := seg, "", false
	if i := strings.IndexByte(seg, '['); i >= 0 {
		name, filter, isArray = seg[:i], strings.TrimSuffix(seg[i+1:], "]"), true
	}
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %q is reached through a %s, want object", full, seg, kindOf(v))
	}
	child, ok := obj[name]
	if !ok {
		return nil, true
	}
	if !isArray {
		return resolve(t, child, segs[1:], full)
	}
	arr, ok := child.([]any)
	if !ok {
		t.Fatalf("%s: %q is %s, want array", full, name, kindOf(child))
	}
	matched := 0
	for _, el := range arr {
		if filter != "" {
			k, want, _ := strings.Cut(filter, "=")
			m, _ := el.(map[string]any)
			if m == nil || jsonText(m[k]) != want {
				continue
			}
		}
		matched++
		vs, abs := resolve(t, el, segs[1:], full)
		if abs {
			return nil, true
		}
		values = append(values, vs...)
	}
	if matched == 0 {
		t.Fatalf("%s: no element of %q to check (choose parameters that fill it)", full, name)
	}
	return values, false
}

func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}
