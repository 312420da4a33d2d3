package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/socialcrawl/crawler/sources"
)

// Defaults of a job file.
const (
	KeyEnvDefault       = "CRAWLER_API_KEY"
	WorkersDefault      = 4
	MaxPagesDefault     = 20
	MaxDepthDefault     = 1
	LeaseTimeoutDefault = 2 * time.Minute
)

// Job is a parsed, defaulted and validated job file.
type Job struct {
	Name   string `yaml:"name" json:"name"`
	API    API    `yaml:"api" json:"api"`
	Limits Limits `yaml:"limits" json:"limits"`
	Seeds  Seeds  `yaml:"seeds" json:"seeds"`
	// Expand lists the expansion edges to follow. When the key is absent,
	// profiles fan out to followers and following.
	Expand *Expand `yaml:"expand" json:"expand"`
}

// API says where the upstream is and which environment variable holds the
// key. The key itself never appears in a job file.
type API struct {
	BaseURL    string   `yaml:"base_url" json:"base_url"`
	KeyEnv     string   `yaml:"key_env" json:"key_env"`
	Prefixes   Prefixes `yaml:"prefixes" json:"prefixes"`
	Timeout    Duration `yaml:"timeout" json:"timeout"`
	MaxRetries int      `yaml:"max_retries" json:"max_retries"`
	// RetryInitial and RetryMax shape the exponential back-off of retries
	// (defaults: sources.RetryInitialDefault, RetryMaxDefault);
	// RetryAfterCap caps the pause a 429's Retry-After may impose.
	RetryInitial  Duration `yaml:"retry_initial" json:"retry_initial"`
	RetryMax      Duration `yaml:"retry_max" json:"retry_max"`
	RetryAfterCap Duration `yaml:"retry_after_cap" json:"retry_after_cap"`
	// OutageWindow is how long an upstream that gives no HTTP answer at all
	// is waited out (workers paused, one probe on back-off) before the run
	// stops resumable (default sources.OutageWindowDefault).
	OutageWindow Duration `yaml:"outage_window" json:"outage_window"`
	// Rate is the request ceiling per second for the key (0: none).
	Rate  float64 `yaml:"rate" json:"rate"`
	Burst int     `yaml:"burst" json:"burst"`
}

// Prefixes are the platforms' path prefixes under base_url.
type Prefixes struct {
	ShortVideo  string `yaml:"shortvideo" json:"shortvideo"`
	PhotoSocial string `yaml:"photosocial" json:"photosocial"`
}

// Limits bound the work of a run.
type Limits struct {
	Workers      int      `yaml:"workers" json:"workers"`
	MaxPages     int      `yaml:"max_pages" json:"max_pages"`
	MaxDepth     int      `yaml:"max_depth" json:"max_depth"`
	LeaseTimeout Duration `yaml:"lease_timeout" json:"lease_timeout"`
	// MaxCredits caps the credits the run may spend, across all its workers
	// and processes (absent: no cap). `crawler run --max-credits` overrides.
	MaxCredits *int64 `yaml:"max_credits" json:"max_credits,omitempty"`
}

// Seeds are where a run starts.
type Seeds struct {
	ShortVideo  ShortVideoSeeds  `yaml:"shortvideo" json:"shortvideo"`
	PhotoSocial PhotoSocialSeeds `yaml:"photosocial" json:"photosocial"`
}

// ShortVideoSeeds are the seeds on the short-video platform.
type ShortVideoSeeds struct {
	Profiles        []string      `yaml:"profiles" json:"profiles,omitempty"`
	SecUIDs         []string      `yaml:"sec_uids" json:"sec_uids,omitempty"`
	KeywordSearches []KeywordSeed `yaml:"keyword_searches" json:"keyword_searches,omitempty"`
	HashtagSearches []string      `yaml:"hashtag_searches" json:"hashtag_searches,omitempty"`
	TopSearches     []string      `yaml:"top_searches" json:"top_searches,omitempty"`
	Songs           []string      `yaml:"songs" json:"songs,omitempty"`
	Live            []string      `yaml:"live" json:"live,omitempty"`
	TrendingFeed    bool          `yaml:"trending_feed" json:"trending_feed,omitempty"`
	PopularVideos   bool          `yaml:"popular_videos" json:"popular_videos,omitempty"`
	PopularCreators bool          `yaml:"popular_creators" json:"popular_creators,omitempty"`
}

// PhotoSocialSeeds are the seeds on the photo-sharing platform.
type PhotoSocialSeeds struct {
	Profiles      []string `yaml:"profiles" json:"profiles,omitempty"`
	Posts         []string `yaml:"posts" json:"posts,omitempty"`
	ReelsSearches []string `yaml:"reels_searches" json:"reels_searches,omitempty"`
	Transcripts   []string `yaml:"transcripts" json:"transcripts,omitempty"`
	Embeds        []string `yaml:"embeds" json:"embeds,omitempty"`
	Highlights    []string `yaml:"highlights" json:"highlights,omitempty"`
}

// KeywordSeed is a keyword search in either published form: a plain string
// is form A (keyword); a mapping with query and options is form B.
type KeywordSeed struct {
	sources.KeywordQuery
	line int
}

var keywordSeedKeys = map[string]bool{"keyword": true, "query": true, "date_posted": true, "sort_by": true, "region": true, "trim": true}

func (k *KeywordSeed) UnmarshalYAML(n *yaml.Node) error {
	k.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		k.Keyword = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if key := n.Content[i]; !keywordSeedKeys[key.Value] {
				return fmt.Errorf("line %d: field %s not found in type KeywordSeed", key.Line, key.Value)
			}
		}
		var v struct {
			Keyword    string `yaml:"keyword"`
			Query      string `yaml:"query"`
			DatePosted string `yaml:"date_posted"`
			SortBy     string `yaml:"sort_by"`
			Region     string `yaml:"region"`
			Trim       bool   `yaml:"trim"`
		}
		if err := n.Decode(&v); err != nil {
			return err
		}
		k.KeywordQuery = sources.KeywordQuery{Keyword: v.Keyword, Query: v.Query, DatePosted: v.DatePosted, SortBy: v.SortBy, Region: v.Region, Trim: v.Trim}
		return nil
	}
	return fmt.Errorf("line %d: a keyword search is a string or a mapping with query and options", n.Line)
}

// Expand holds the expansion edges; a nil edge is not followed.
type Expand struct {
	// Followers and Following: a profile -> its followers / following lists.
	Followers *Edge `yaml:"followers" json:"followers,omitempty"`
	Following *Edge `yaml:"following" json:"following,omitempty"`
	// FollowerProfiles: a follower or following entry -> its profile, one
	// hop deeper (snowball sampling).
	FollowerProfiles *Edge `yaml:"follower_profiles" json:"follower_profiles,omitempty"`
	// SongVideos: a song -> the videos using it.
	SongVideos *Edge `yaml:"song_videos" json:"song_videos,omitempty"`
	// VideoAuthors: any video seen -> its author's profile, one hop deeper.
	VideoAuthors *Edge `yaml:"video_authors" json:"video_authors,omitempty"`
	// SearchResults: a keyword or top search result -> its user's profile, its
	// video's author's profile, or its sound's song, one hop deeper.
	SearchResults *Edge `yaml:"search_results" json:"search_results,omitempty"`
	// Comments bounds the comment lists of post seeds (always fetched: a
	// post seed is its comments) and of reels.
	Comments *Edge `yaml:"comments" json:"comments,omitempty"`
	// ReelComments and ReelTranscripts: a reel found by a reels search ->
	// its comments / its transcript, one hop deeper.
	ReelComments    *Edge `yaml:"reel_comments" json:"reel_comments,omitempty"`
	ReelTranscripts *Edge `yaml:"reel_transcripts" json:"reel_transcripts,omitempty"`
}

// edges names every edge, for defaults and validation.
func (e *Expand) edges() map[string]**Edge {
	return map[string]**Edge{
		"followers": &e.Followers, "following": &e.Following, "follower_profiles": &e.FollowerProfiles,
		"song_videos": &e.SongVideos, "video_authors": &e.VideoAuthors, "search_results": &e.SearchResults,
		"comments": &e.Comments, "reel_comments": &e.ReelComments, "reel_transcripts": &e.ReelTranscripts,
	}
}

// Edge configures one expansion edge.
type Edge struct {
	// MaxPages bounds each list walked along the edge (default:
	// limits.max_pages). Edges to single objects ignore it.
	MaxPages int `yaml:"max_pages" json:"max_pages"`
}

// Duration is a time.Duration written as "90s" or "2m" in YAML.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration like 30s or 2m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// JobError is a problem in a job file, located by key path and line.
type JobError struct {
	File string
	Line int
	Key  string // dotted path, e.g. "limits.workers"
	Msg  string
}

func (e *JobError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// JobErrors is every problem found in a job file.
type JobErrors []*JobError

func (es JobErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// LoadJob reads, decodes strictly, defaults and validates a job file.
func LoadJob(path string) (*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("job file: %w", err)
	}
	return ParseJob(path, data)
}

// ParseJob decodes data (named path in errors), rejecting unknown keys and
// wrong types, then applies defaults and validates.
func ParseJob(path string, data []byte) (*Job, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, JobErrors{yamlError(path, err)}
	}
	if len(root.Content) == 0 {
		return nil, JobErrors{{File: path, Line: 1, Msg: "the job file is empty"}}
	}
	lines := map[string]int{}
	indexLines(root.Content[0], "", lines)

	var job Job
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&job); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			errs := make(JobErrors, 0, len(te.Errors))
			for _, m := range te.Errors {
				errs = append(errs, yamlError(path, errors.New(m)))
			}
			return nil, errs
		}
		return nil, JobErrors{yamlError(path, err)}
	}
	job.applyDefaults()
	if errs := job.validate(); len(errs) > 0 {
		for _, e := range errs {
			e.File = path
			e.Line = lookupLine(lines, e.Key)
		}
		return nil, errs
	}
	return &job, nil
}

var (
	lineRe       = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownKeyRe = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	wrongTypeRe  = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
)

// yamlError turns a yaml.v3 message into a JobError in the job's words.
func yamlError(path string, err error) *JobError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	je := &JobError{File: path, Msg: msg}
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		je.Line, _ = strconv.Atoi(m[1])
		je.Msg = m[2]
		if k := unknownKeyRe.FindStringSubmatch(m[2]); k != nil {
			je.Key = k[1]
			je.Msg = "unknown key"
		} else if t := wrongTypeRe.FindStringSubmatch(m[2]); t != nil {
			je.Msg = fmt.Sprintf("wrong type: %s %q where %s is expected", yamlKind(t[1]), t[2], goKind(t[3]))
		}
	}
	return je
}

func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "string"
	case "int":
		return "integer"
	case "seq":
		return "list"
	case "map":
		return "mapping"
	}
	return tag
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	}
	return "a mapping"
}

// indexLines records the line of every key path ("a.b", "a.list[2]").
func indexLines(n *yaml.Node, prefix string, lines map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if prefix != "" {
				k = prefix + "." + k
			}
			lines[k] = n.Content[i].Line
			indexLines(n.Content[i+1], k, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			k := fmt.Sprintf("%s[%d]", prefix, i)
			lines[k] = c.Line
			indexLines(c, k, lines)
		}
	}
}

// lookupLine finds the line of key, or of its nearest present ancestor.
func lookupLine(lines map[string]int, key string) int {
	for key != "" {
		if l, ok := lines[key]; ok {
			return l
		}
		if i := strings.LastIndexAny(key, ".["); i >= 0 {
			key = key[:i]
		} else {
			break
		}
	}
	return 1
}

func (j *Job) applyDefaults() {
	if j.API.KeyEnv == "" {
		j.API.KeyEnv = KeyEnvDefault
	}
	if j.API.Prefixes.ShortVideo == "" {
		j.API.Prefixes.ShortVideo = sources.ShortVideoPrefixDefault
	}
	if j.API.Prefixes.PhotoSocial == "" {
		j.API.Prefixes.PhotoSocial = sources.PhotoSocialPrefixDefault
	}
	if j.API.OutageWindow == 0 {
		j.API.OutageWindow = Duration(sources.OutageWindowDefault)
	}
	if j.Limits.Workers == 0 {
		j.Limits.Workers = WorkersDefault
	}
	if j.Limits.MaxPages == 0 {
		j.Limits.MaxPages = MaxPagesDefault
	}
	if j.Limits.MaxDepth == 0 {
		j.Limits.MaxDepth = MaxDepthDefault
	}
	if j.Limits.LeaseTimeout == 0 {
		j.Limits.LeaseTimeout = Duration(LeaseTimeoutDefault)
	}
	if j.Expand == nil {
		j.Expand = &Expand{Followers: &Edge{}, Following: &Edge{}}
	}
	for _, e := range j.Expand.edges() {
		if *e != nil && (*e).MaxPages == 0 {
			(*e).MaxPages = j.Limits.MaxPages
		}
	}
}

// listPages is the page limit of lists along edge e, or of seed lists when
// e is off.
func (j *Job) listPages(e *Edge) int {
	if e != nil {
		return e.MaxPages
	}
	return j.Limits.MaxPages
}

var envRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (j *Job) validate() JobErrors {
	var errs JobErrors
	add := func(key, format string, args ...any) {
		errs = append(errs, &JobError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(j.Name) == "" {
		add("name", "is required: a name for the job")
	}
	if j.API.BaseURL == "" {
		add("api.base_url", "is required: the service address including /api")
	} else if !strings.HasPrefix(j.API.BaseURL, "http://") && !strings.HasPrefix(j.API.BaseURL, "https://") {
		add("api.base_url", "%q must start with http:// or https://", j.API.BaseURL)
	}
	if !envRe.MatchString(j.API.KeyEnv) {
		add("api.key_env", "%q is not an environment variable name", j.API.KeyEnv)
	}
	for key, p := range map[string]string{"api.prefixes.shortvideo": j.API.Prefixes.ShortVideo, "api.prefixes.photosocial": j.API.Prefixes.PhotoSocial} {
		if !strings.HasPrefix(p, "/") {
			add(key, "%q must start with /", p)
		}
	}
	if j.API.Rate < 0 {
		add("api.rate", "must not be negative")
	}
	if j.API.Burst < 0 {
		add("api.burst", "must not be negative")
	}
	if j.Limits.Workers < 1 || j.Limits.Workers > 256 {
		add("limits.workers", "must be between 1 and 256, got %d", j.Limits.Workers)
	}
	if j.Limits.MaxPages < 0 {
		add("limits.max_pages", "must not be negative")
	}
	if j.Limits.MaxCredits != nil && *j.Limits.MaxCredits < 0 {
		add("limits.max_credits", "must not be negative")
	}
	if j.Limits.MaxDepth < 0 {
		add("limits.max_depth", "must not be negative")
	}
	for name, e := range j.Expand.edges() {
		if *e != nil && (*e).MaxPages < 0 {
			add("expand."+name+".max_pages", "must not be negative")
		}
	}
	errs = append(errs, j.Seeds.validate()...)
	return errs
}
