package pipeline

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/sources"
)

// maxHandleBytes caps a handle (after its @).
const maxHandleBytes = 64

var (
	handleRe = regexp.MustCompile(`^[A-Za-z0-9._]{1,64}$`)
	secUIDRe = regexp.MustCompile(`^[A-Za-z0-9_\-.]{8,200}$`)
	songRe   = regexp.MustCompile(`^[A-Za-z0-9_\-]{1,64}$`)
)

// validate checks every seed and that there is at least one. Every string
// in the file already passed checkText (valid UTF-8, no control
// characters, at most MaxStringBytes); here each kind gets its own shape
// and cap, so nothing the upstream or the database would refuse reaches
// them.
func (s *Seeds) validate() JobErrors {
	var errs JobErrors
	n := 0
	add := func(key, format string, args ...any) {
		errs = append(errs, &JobError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	each := func(key string, list []string, check func(string) string) {
		for i, v := range list {
			n++
			if msg := check(v); msg != "" {
				add(fmt.Sprintf("%s[%d]", key, i), "%s %s", quoteShort(v), msg)
			}
		}
	}
	handle := func(v string) string {
		if h := sources.NormalizeHandle(v); len(h) > maxHandleBytes {
			return fmt.Sprintf("is %d bytes long; a handle is at most %d", len(h), maxHandleBytes)
		} else if !handleRe.MatchString(h) {
			return "is not a handle (letters, digits, . and _, optionally after @)"
		}
		return ""
	}
	text := func(v string) string {
		if strings.TrimSpace(v) == "" {
			return "is empty"
		}
		if len(v) > MaxKeywordBytes {
			return fmt.Sprintf("is %d bytes long; a search is at most %d", len(v), MaxKeywordBytes)
		}
		return ""
	}
	postURL := func(v string) string {
		if len(v) > sources.MaxURLBytes {
			return fmt.Sprintf("is %d bytes long; a URL is at most %d", len(v), sources.MaxURLBytes)
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "is not an absolute http(s) post or reel URL"
		}
		return ""
	}
	sv, ps := &s.ShortVideo, &s.PhotoSocial
	each("seeds.shortvideo.profiles", sv.Profiles, handle)
	each("seeds.shortvideo.sec_uids", sv.SecUIDs, func(v string) string {
		if !secUIDRe.MatchString(v) {
			return "is not a secUid (8 to 200 letters, digits, _ - .)"
		}
		return ""
	})
	for i, k := range sv.KeywordSearches {
		n++
		key := fmt.Sprintf("seeds.shortvideo.keyword_searches[%d]", i)
		if len(k.Keyword) > MaxKeywordBytes || len(k.Query) > MaxKeywordBytes {
			add(key, "is %d bytes long; a search is at most %d", max(len(k.Keyword), len(k.Query)), MaxKeywordBytes)
		} else if err := k.Validate(); err != nil {
			add(key, "%v", err)
		}
	}
	each("seeds.shortvideo.hashtag_searches", sv.HashtagSearches, text)
	each("seeds.shortvideo.top_searches", sv.TopSearches, text)
	each("seeds.shortvideo.songs", sv.Songs, func(v string) string {
		if !songRe.MatchString(v) {
			return "is not a song id (1 to 64 letters, digits, _ and -)"
		}
		return ""
	})
	each("seeds.shortvideo.live", sv.Live, handle)
	for _, on := range []bool{sv.TrendingFeed, sv.PopularVideos, sv.PopularCreators} {
		if on {
			n++
		}
	}
	each("seeds.photosocial.profiles", ps.Profiles, handle)
	each("seeds.photosocial.posts", ps.Posts, postURL)
	each("seeds.photosocial.reels_searches", ps.ReelsSearches, text)
	each("seeds.photosocial.transcripts", ps.Transcripts, postURL)
	each("seeds.photosocial.embeds", ps.Embeds, handle)
	each("seeds.photosocial.highlights", ps.Highlights, func(v string) string {
		if len(v) > MaxNameBytes {
			return fmt.Sprintf("is %d bytes long; an id is at most %d", len(v), MaxNameBytes)
		}
		if _, err := sources.HighlightDigits(v); err != nil {
			return "is not a highlight id (digits, optionally after highlight:)"
		}
		return ""
	})
	if n == 0 && len(errs) == 0 {
		add("seeds", "no seeds: list at least one, e.g. seeds.shortvideo.profiles")
	}
	return errs
}

// SeedTasks turns the job's seeds into the run's first tasks, at depth 0.
func SeedTasks(job *Job) []NewTask {
	var t []NewTask
	add := func(kind, key string, params map[string]string, maxPages int) {
		t = append(t, NewTask{Kind: kind, Key: key, Params: params, MaxPages: maxPages})
	}
	sv, ps, ex := &job.Seeds.ShortVideo, &job.Seeds.PhotoSocial, job.Expand
	for _, h := range sv.Profiles {
		add(KindSVProfile, sources.NormalizeHandle(h), nil, 0)
	}
	for _, s := range sv.SecUIDs {
		// The owner's handle is unknown: edges name it by its secUid.
		owner := map[string]string{"handle": secUIDUser(s)}
		if ex.Followers != nil {
			add(KindSVFollowers, s, owner, ex.Followers.MaxPages)
		}
		if ex.Following != nil {
			add(KindSVFollowing, s, owner, ex.Following.MaxPages)
		}
		if ex.Followers == nil && ex.Following == nil {
			add(KindSVFollowers, s, owner, job.Limits.MaxPages)
			add(KindSVFollowing, s, owner, job.Limits.MaxPages)
		}
	}
	for _, k := range sv.KeywordSearches {
		add(KindSVKeywordSearch, k.Key(), keywordParams(k.KeywordQuery), job.Limits.MaxPages)
	}
	for _, k := range sv.HashtagSearches {
		add(KindSVHashtagSearch, strings.TrimSpace(k), nil, job.Limits.MaxPages)
	}
	for _, k := range sv.TopSearches {
		add(KindSVTopSearch, strings.TrimSpace(k), nil, job.Limits.MaxPages)
	}
	for _, id := range sv.Songs {
		add(KindSVSong, id, nil, 0)
	}
	for _, h := range sv.Live {
		add(KindSVLive, sources.NormalizeHandle(h), nil, 0)
	}
	if sv.TrendingFeed {
		add(KindSVTrending, "trending", nil, 0)
	}
	if sv.PopularVideos {
		add(KindSVPopularVideos, "popular_videos", nil, 0)
	}
	if sv.PopularCreators {
		add(KindSVPopularCreators, "popular_creators", nil, 0)
	}
	for _, h := range ps.Profiles {
		add(KindPSProfile, sources.NormalizeHandle(h), nil, 0)
	}
	for _, u := range ps.Posts {
		add(KindPSComments, u, nil, job.listPages(ex.Comments))
	}
	for _, q := range ps.ReelsSearches {
		add(KindPSReelsSearch, strings.TrimSpace(q), nil, job.Limits.MaxPages)
	}
	for _, u := range ps.Transcripts {
		add(KindPSTranscript, u, nil, 0)
	}
	for _, h := range ps.Embeds {
		add(KindPSEmbed, sources.NormalizeHandle(h), nil, 0)
	}
	for _, id := range ps.Highlights {
		digits, _ := sources.HighlightDigits(id)
		add(KindPSHighlight, digits, nil, 0)
	}
	return t
}

// secUIDUser is the users key of an account known only by its secUid.
func secUIDUser(secUID string) string { return "secuid:" + secUID }

func keywordParams(q sources.KeywordQuery) map[string]string {
	p := map[string]string{}
	for k, v := range map[string]string{"keyword": q.Keyword, "query": q.Query, "date_posted": q.DatePosted, "sort_by": q.SortBy, "region": q.Region} {
		if v != "" {
			p[k] = v
		}
	}
	if q.Trim {
		p["trim"] = "true"
	}
	return p
}

func keywordQuery(p map[string]string) sources.KeywordQuery {
	return sources.KeywordQuery{Keyword: p["keyword"], Query: p["query"], DatePosted: p["date_posted"],
		SortBy: p["sort_by"], Region: p["region"], Trim: p["trim"] == "true"}
}

// Start records a new run of job with its seeds and budget, and returns its id.
func Start(ctx context.Context, pool *pgxpool.Pool, job *Job) (int64, error) {
	return CreateRun(ctx, pool, job, SeedTasks(job))
}
