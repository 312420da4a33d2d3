package kinds

import (
	"net/url"
	"regexp"
	"strings"
)

// One task per post, reel or video whatever URL form the user typed
// (issue 32, point 4): a URL seed is keyed by its canonical form, the one
// the lists' paths key the same media by, so a seed its owner's list also
// reaches is one task, bought once. The forms accepted (docs/jobfile.md,
// "URL seeds"): any query (utm_*, igsh, img_index, _r, _t, is_from_webapp...)
// and fragment, a trailing slash or none, the m. and www. hosts and the bare
// domain, /p/, /reel/, /reels/ and /tv/ paths with or without the owner's
// handle before them. A share link that names the media only through a
// redirect (/share/..., vm.tiktok.com) has no canonical form without a
// request: it is refused, by its job-file key and line.

var (
	mediaCodeRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	videoIDRe   = regexp.MustCompile(`^[0-9]{1,30}$`)
)

// mediaOf reads a post or reel URL's code, and whether its path names a
// reel (/reel/, /reels/, /tv/); why says what is wrong when it names none.
func mediaOf(v string) (code string, reel bool, why string) {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false, "is not an absolute http(s) post or reel URL"
	}
	segs := pathSegments(u.Path)
	if len(segs) > 0 && segs[0] == "share" {
		return "", false, "is a share link (/share/...): it names the post only through a redirect; open it and copy the post's address (.../p/<code>/)"
	}
	for i := 0; i < len(segs) && i < 2; i++ {
		switch segs[i] {
		case "p", "reel", "reels", "tv":
			if i+1 < len(segs) && mediaCodeRe.MatchString(segs[i+1]) {
				return segs[i+1], segs[i] != "p", ""
			}
			return "", false, "names no post code after /" + segs[i] + "/ (.../p/<code>/)"
		}
	}
	return "", false, "is not a post or reel URL (.../p/<code>/, .../reel/<code>/, optionally after the owner's handle)"
}

// videoOf reads a short-video URL's author handle and video id; why says
// what is wrong when it names none.
func videoOf(v string) (handle, id, why string) {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", "is not an absolute http(s) video URL"
	}
	host := strings.ToLower(u.Hostname())
	segs := pathSegments(u.Path)
	if strings.HasPrefix(host, "vm.") || strings.HasPrefix(host, "vt.") || (len(segs) > 0 && segs[0] == "t") {
		return "", "", "is a share link: it names the video only through a redirect; open it and copy the video's address (…/@<handle>/video/<id>)"
	}
	if len(segs) >= 3 && strings.HasPrefix(segs[0], "@") && len(segs[0]) > 1 && segs[1] == "video" && videoIDRe.MatchString(segs[2]) {
		return segs[0][1:], segs[2], ""
	}
	return "", "", "is not a video URL (…/@<handle>/video/<id>)"
}

func pathSegments(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// webBase is the scheme and host a URL seed is keyed on: the dialect's
// web address when the URL is on its platform (any of www., m. or the
// bare domain), else the URL's own host, lowercased.
func webBase(j Job, kind, v string) string {
	base := j.Route(kind).WebBase
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return base
	}
	b, err := url.Parse(base)
	if err == nil && bareHost(u.Host) == bareHost(b.Host) {
		return base
	}
	return "https://" + bareHostWWW(u.Host)
}

func bareHost(h string) string {
	h = strings.ToLower(h)
	for _, p := range []string{"www.", "m."} {
		h = strings.TrimPrefix(h, p)
	}
	if h == "instagr.am" {
		return "instagram.com"
	}
	return h
}

func bareHostWWW(h string) string {
	h = strings.ToLower(h)
	if rest, ok := strings.CutPrefix(h, "m."); ok {
		return "www." + rest
	}
	return h
}

// canonicalMediaURL is the key of a post or reel URL seed of kind (its
// comments, transcript or post): /reel/<code>/ for a path naming a reel,
// else /p/<code>/, on webBase.
func canonicalMediaURL(j Job, kind, v string) string {
	code, reel, _ := mediaOf(v)
	r := j.Route(kind)
	r.WebBase = webBase(j, kind, v)
	if reel {
		return r.ReelURL(code)
	}
	return r.PostURL(code)
}

// canonicalVideoURL is the key of a video URL seed: /@<handle>/video/<id>
// on webBase.
func canonicalVideoURL(j Job, kind, v string) string {
	handle, id, _ := videoOf(v)
	r := j.Route(kind)
	r.WebBase = webBase(j, kind, v)
	return r.VideoURL(handle, id)
}

// mediaTasks and videoTasks are the tasks of a URL seed: one, keyed by its
// canonical form.
func mediaTasks(j Job, k *Kind, v string) []NewTask {
	return []NewTask{k.task(j, canonicalMediaURL(j, k.Name, v), nil, 0)}
}

func videoTasks(j Job, k *Kind, v string) []NewTask {
	return []NewTask{k.task(j, canonicalVideoURL(j, k.Name, v), nil, 0)}
}
