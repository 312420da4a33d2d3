package jobfile

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
)

// Defaults of a job file.
const (
	KeyEnvDefault       = "CRAWLER_API_KEY"
	MaxPagesDefault     = 20
	MaxDepthDefault     = 1
	LeaseTimeoutDefault = 2 * time.Minute
	// MaxConnsDefault is database.max_conns: the PostgreSQL connections
	// one process opens at most, whatever its concurrency.
	MaxConnsDefault = 10
)

// MaxFileBytes caps a job file: a larger one is refused before it is
// read.
const MaxFileBytes = 1 << 20

// Error is a problem in a job file, located by key path and line;
// Errors is every problem found, in the order of lines.
type (
	Error  = yamlstrict.Error
	Errors = yamlstrict.Errors
)

// Job is a parsed, defaulted and validated job file.
type Job struct {
	Name   string      `yaml:"name" json:"name"`
	API    API         `yaml:"api" json:"api"`
	Limits Limits      `yaml:"limits" json:"limits"`
	Seeds  kinds.Seeds `yaml:"seeds" json:"seeds"`
	// Expand lists the expansion edges to follow. When the key is absent,
	// profiles fan out to followers and following.
	Expand *Expand `yaml:"expand" json:"expand"`
	// Reuse makes repeat harvests cheap: refresh_after and the full walks
	// of stop_at_seen lists (reuse.go). The zero value reuses nothing.
	Reuse Reuse `yaml:"reuse" json:"reuse"`
	// ResumeWithin: `crawler run` continues the job's interrupted run when
	// it was last active within this window (default ResumeWithinDefault;
	// 0: never continue one, start a new run). See rerun.go.
	ResumeWithin Duration `yaml:"resume_within" json:"resume_within"`
	// Archive keeps every fetched page's body (crawl.pages), so `crawler
	// replay` can rebuild the run's rows without buying them again.
	Archive bool `yaml:"archive" json:"archive,omitempty"`
	// Comments are the photo-sharing comments' options.
	Comments Comments `yaml:"comments" json:"comments,omitempty"`
	// Database bounds what one process asks of PostgreSQL.
	Database Database `yaml:"database" json:"database"`
	// Events tells webhooks and NOTIFY listeners of each run's end
	// (events.go); left out of the run's recorded job.
	Events Events `yaml:"events" json:"-"`

	present     map[string]bool // keys written in the file (see has)
	baseURLFlag bool            // api.base_url came from --base-url
	loadedAt    time.Time       // what a date window's duration counts back from
}

// API is the job file's `api:` section: the client's options (decoded
// over sources.DefaultOptions, validated by sources.Options.Validate) and
// the environment variable that holds the key. The key itself never
// appears in a job file.
type API struct {
	sources.Options `yaml:",inline"`
	KeyEnv          string `yaml:"key_env" json:"key_env"`
}

// Prefixes are the platforms' path prefixes under base_url.
type Prefixes = sources.Prefixes

// Comments: IncludeReplies asks the comments endpoint for each comment's
// replies (include_replies=true), which the real service charges
// sources.RepliesCredits per page whether or not there are any; the
// budget and crawler plan count them so.
type Comments struct {
	IncludeReplies bool `yaml:"include_replies" json:"include_replies,omitempty"`
}

// applyTo sets the comments endpoint's fixed parameter and credits in o,
// unless api.endpoints.photosocial.comments sets them.
func (c Comments) applyTo(o *sources.Options) {
	if !c.IncludeReplies {
		return
	}
	ov := o.Endpoints["photosocial"]["comments"]
	if _, ok := ov.Fixed["include_replies"]; !ok {
		ov.Fixed = maps.Clone(ov.Fixed)
		if ov.Fixed == nil {
			ov.Fixed = map[string]string{}
		}
		ov.Fixed["include_replies"] = "true"
	}
	if ov.Credits == 0 {
		ov.Credits = sources.RepliesCredits
	}
	if o.Endpoints == nil {
		o.Endpoints = map[string]map[string]sources.Override{}
	}
	if o.Endpoints["photosocial"] == nil {
		o.Endpoints["photosocial"] = map[string]sources.Override{}
	}
	o.Endpoints["photosocial"]["comments"] = ov
}

// Limits bound the work of a run.
type Limits struct {
	// Workers caps the tasks in progress and the requests in flight of one
	// process; 0 (absent) leaves them to the client's adaptive limit.
	Workers      int      `yaml:"workers" json:"workers"`
	MaxPages     int      `yaml:"max_pages" json:"max_pages"`
	MaxDepth     int      `yaml:"max_depth" json:"max_depth"`
	LeaseTimeout Duration `yaml:"lease_timeout" json:"lease_timeout"`
	// MaxCredits caps the credits the run may spend, across all its workers
	// and processes (absent: no cap). `crawler run --max-credits` overrides.
	MaxCredits *int64 `yaml:"max_credits" json:"max_credits,omitempty"`
}

// Database is the job file's `database:` section. MaxConns caps the
// connections of one process (default MaxConnsDefault, at least 2: the
// shared quota's listener keeps one), whatever its concurrency: requests in
// flight hold none.
type Database struct {
	MaxConns int `yaml:"max_conns" json:"max_conns"`
}

// Expand holds the expansion edges (kinds.Expand: edges are the kinds');
// Edge configures one.
type (
	Expand = kinds.Expand
	Edge   = kinds.Edge
)

// Duration is a time.Duration written as "90s" or "2m" in YAML and JSON.
type Duration = sources.Duration

// LoadOptions are the operator's command-line choices that validation
// must see.
type LoadOptions struct {
	// BaseURL, when set, overrides api.base_url (crawler run --base-url).
	BaseURL string
	// AllowInsecureHTTP lets the key go over plain http to a host that is
	// not loopback (crawler run --allow-insecure-http); a job file cannot.
	AllowInsecureHTTP bool
	// Now, when set, is the moment the date windows' durations (posted_after:
	// 90d) count back from; else when the job is loaded.
	Now time.Time
}

// Load reads, decodes strictly, defaults and validates a job file.
func Load(path string) (*Job, error) { return LoadWith(path, LoadOptions{}) }

// LoadWith is Load with the operator's options. A file larger than
// MaxFileBytes is refused before it is read.
func LoadWith(path string, o LoadOptions) (*Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("job file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileBytes {
		return nil, Errors{tooLarge(path, fi.Size())}
	}
	// A file that grows, or is not a regular file, is read only up to the cap.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("job file: %w", err)
	}
	return ParseWith(path, data, o)
}

func tooLarge(path string, size int64) *Error {
	return &Error{File: path, Msg: fmt.Sprintf("the job file is %s bytes; job files are at most %d bytes (1 MiB)", sizeText(size), MaxFileBytes)}
}

func sizeText(n int64) string {
	if n > MaxFileBytes {
		return "more than " + strconv.Itoa(MaxFileBytes)
	}
	return strconv.FormatInt(n, 10)
}

// Parse decodes data (named path in errors), rejecting unknown keys and
// wrong types, then applies defaults and validates.
func Parse(path string, data []byte) (*Job, error) { return ParseWith(path, data, LoadOptions{}) }

// ParseWith is Parse with the operator's options.
func ParseWith(path string, data []byte, o LoadOptions) (*Job, error) {
	if len(data) > MaxFileBytes {
		return nil, Errors{tooLarge(path, int64(len(data)))}
	}
	// Keys left out keep their defaults; an explicit zero stays zero.
	job := Job{API: API{Options: sources.DefaultOptions(), KeyEnv: KeyEnvDefault}}
	doc, present, err := yamlstrict.Unmarshal(path, data, &job, reflect.TypeFor[Duration]())
	if err != nil {
		return nil, err
	}
	job.present = present
	job.applyDefaults()
	if o.BaseURL != "" {
		job.API.BaseURL = o.BaseURL
		job.baseURLFlag = true
	}
	job.API.AllowInsecureHTTP = o.AllowInsecureHTTP
	job.loadedAt = o.Now
	if job.loadedAt.IsZero() {
		job.loadedAt = time.Now()
	}
	errs := job.validate()
	for _, e := range errs {
		if strings.HasPrefix(e.Key, "--") {
			continue // a flag, not a line of the file
		}
		e.File = path
		e.Line = yamlstrict.LineOf(doc, e.Key)
	}
	errs.Sort()
	// Then each seed file's problems: those of the file itself at the
	// job file's line of its key, those of a value at the seed file's line.
	for _, e := range job.checkSeedFiles(filepath.Dir(path), errs) {
		if e.File == "" {
			e.File, e.Line = path, yamlstrict.LineOf(doc, e.Key)
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &job, nil
}

// checkSeedFiles streams every seed file (kinds.SeedFile.Check) whose key
// has no error yet among errs, from dir, the job file's directory: each
// value validated, the content hashed for the fingerprint.
func (j *Job) checkSeedFiles(dir string, errs Errors) Errors {
	bad := map[string]bool{}
	for _, e := range errs {
		bad[e.Key] = true
	}
	var out Errors
	for _, f := range j.Seeds.FileList() {
		if !bad[f.Key()] {
			out = append(out, f.Check(dir)...)
		}
	}
	return out
}

// has reports whether key (a dotted path outside lists) was written in the
// job file, so that an explicit zero is not mistaken for an absent key.
func (j *Job) has(key string) bool { return j.present[key] }

func (j *Job) applyDefaults() {
	if !j.has("database.max_conns") {
		j.Database.MaxConns = MaxConnsDefault
	}
	if !j.has("limits.max_pages") {
		j.Limits.MaxPages = MaxPagesDefault
	}
	if !j.has("limits.max_depth") {
		j.Limits.MaxDepth = MaxDepthDefault
	}
	if !j.has("limits.lease_timeout") {
		j.Limits.LeaseTimeout = Duration(LeaseTimeoutDefault)
	}
	if !j.has("resume_within") {
		j.ResumeWithin = Duration(ResumeWithinDefault)
	}
	if j.Expand == nil {
		j.Expand = &Expand{Followers: &Edge{}, Following: &Edge{}}
	}
	for name, e := range j.Expand.Edges() {
		if *e != nil && !j.has("expand."+name+".max_pages") {
			(*e).MaxPages = j.Limits.MaxPages
		}
	}
	if !j.has("events.timeout") {
		j.Events.Timeout = Duration(EventsTimeoutDefault)
	}
	j.Reuse.applyDefaults(j)
	j.Comments.applyTo(&j.API.Options)
}

// The kinds read a job through kinds.Job.
var _ kinds.Job = (*Job)(nil)

// Edge is the expand section's edge of key, nil when it is off.
func (j *Job) Edge(key string) *Edge {
	if j.Expand == nil {
		return nil
	}
	return j.Expand.Edge(key)
}

// ListPages is the page limit of lists along edge e, or of seed lists when
// e is off.
func (j *Job) ListPages(e *Edge) int {
	if e != nil {
		return e.MaxPages
	}
	return j.Limits.MaxPages
}

// Window is the refresh_after window of the tasks of seed list key
// ("seeds.shortvideo.profiles") or found along expand key
// ("expand.follower_profiles"): the one the file sets there, else
// reuse.refresh_after.
func (j *Job) Window(key string) time.Duration {
	if name, ok := strings.CutPrefix(key, "seeds."); ok {
		if d, ok := j.Reuse.Seeds[name]; ok {
			return time.Duration(d)
		}
	}
	if name, ok := strings.CutPrefix(key, "expand."); ok && j.has(key+".refresh_after") {
		if e := j.Edge(name); e != nil {
			return time.Duration(e.RefreshAfter)
		}
	}
	return time.Duration(j.Reuse.RefreshAfter)
}

// SentAs is the name the job's dialect sends kind's contract parameter
// param under.
func (j *Job) SentAs(kind, param string) string {
	r, _ := j.API.Route(kind)
	return r.SentAs(param)
}

// Route is how the job's dialect reaches kind's endpoint.
func (j *Job) Route(kind string) sources.Route {
	r, _ := j.API.Route(kind)
	return r
}

// ClientConfig is the client configuration the job asks for, with key: the
// api section is the client's Options; limits.workers, when the job file
// sets it, caps the requests in flight (else the adaptive limit is free up
// to concurrency.HardCeiling).
func (j *Job) ClientConfig(key sources.Secret, log *slog.Logger) sources.Config {
	cfg := sources.Config{Options: j.API.Options, APIKey: key, Logger: log}
	if j.Limits.Workers > 0 {
		cfg.MaxInFlight = min(j.Limits.Workers, concurrency.HardCeiling)
	}
	return cfg
}

// SeedTasks turns the job's inline seeds into the run's first tasks; its
// seed files (Seeds.FileList) are seeded in batches by pipeline.
func (j *Job) SeedTasks() []kinds.NewTask { return kinds.SeedTasks(&j.Seeds, j) }

// Caps and minimums of job-file values (docs/jobfile.md). Integers that
// reach a database integer column are capped at MaxInt32 so none wraps.
const (
	MaxNameBytes    = kinds.MaxNameBytes // name, key_env, ids
	MaxKeywordBytes = kinds.MaxKeywordBytes
	// MaxWorkers is the most tasks one process works on at once.
	MaxWorkers = 4096
	// MaxConns caps database.max_conns.
	MaxConns = 1000
	// A lease lasts at least max(api.timeout, MinLeaseTimeout).
	MinLeaseTimeout = time.Second
	// The api section's caps and minimums are sources'.
	MaxRetriesCap   = sources.MaxRetriesCap
	MaxRate         = sources.MaxRate
	MaxBurst        = sources.MaxBurst
	MinTimeout      = sources.MinTimeout
	MinRetryBackoff = sources.MinRetryBackoff
)

var keyEnvRe = regexp.MustCompile(`^CRAWLER_[A-Z0-9_]+$`)

func (j *Job) validate() Errors {
	var errs Errors
	add := func(key, format string, args ...any) {
		errs = append(errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(j.Name) == "" {
		add("name", "is required: a name for the job")
	} else if len(j.Name) > MaxNameBytes {
		add("name", "is %d bytes long; at most %d", len(j.Name), MaxNameBytes)
	}
	for _, e := range j.API.Validate() {
		key := "api." + e.Key
		if key == "api.base_url" && j.baseURLFlag {
			key = "--base-url"
		}
		add(key, "%s", e.Msg)
	}
	if !keyEnvRe.MatchString(j.API.KeyEnv) || len(j.API.KeyEnv) > MaxNameBytes {
		add("api.key_env", "%s is not a variable of the CRAWLER_ namespace (CRAWLER_ then A-Z, 0-9, _; e.g. CRAWLER_API_KEY): a job file may not name another variable",
			yamlstrict.QuoteShort(j.API.KeyEnv))
	}
	intRange := func(key string, v, lo, hi int64, hint string) {
		if v < lo || v > hi {
			add(key, "must be between %d and %d, got %d%s", lo, hi, v, hint)
		}
	}
	if minLease := max(time.Duration(j.API.Timeout), MinLeaseTimeout); time.Duration(j.Limits.LeaseTimeout) < minLease {
		if j.has("limits.lease_timeout") {
			add("limits.lease_timeout", "%s is shorter than api.timeout (%s): a lease must outlast a request; set at least %s",
				time.Duration(j.Limits.LeaseTimeout), time.Duration(j.API.Timeout), minLease)
		} else {
			add("api.timeout", "%s is longer than limits.lease_timeout (default %s): a lease must outlast a request; set limits.lease_timeout to at least %s",
				time.Duration(j.API.Timeout), time.Duration(j.Limits.LeaseTimeout), minLease)
		}
	}
	if j.ResumeWithin < 0 {
		add("resume_within", "must not be negative, got %s (0: never continue an interrupted run)", time.Duration(j.ResumeWithin))
	}
	if j.has("limits.workers") {
		intRange("limits.workers", int64(j.Limits.Workers), 1, MaxWorkers, " (omit the key for the adaptive limit)")
	}
	intRange("database.max_conns", int64(j.Database.MaxConns), 2, MaxConns, " (PostgreSQL connections of one process)")
	intRange("limits.max_pages", int64(j.Limits.MaxPages), 1, math.MaxInt32, " (a list's page limit; omit the key for the default)")
	intRange("limits.max_depth", int64(j.Limits.MaxDepth), 0, math.MaxInt32, " (0: the seeds and their own lists only)")
	if j.Limits.MaxCredits != nil && *j.Limits.MaxCredits < 0 {
		add("limits.max_credits", "must not be negative, got %d", *j.Limits.MaxCredits)
	}
	for name, e := range j.Expand.Edges() {
		if *e != nil && j.has("expand."+name+".max_pages") { // else limits.max_pages, checked above
			intRange("expand."+name+".max_pages", int64((*e).MaxPages), 1, math.MaxInt32, " (omit the key for limits.max_pages)")
		}
	}
	errs = append(errs, j.validateWindows(j.loadedAt)...)
	errs = append(errs, j.validateDialect()...)
	errs = append(errs, j.Seeds.Validate()...)
	errs = append(errs, j.validateReuse()...)
	errs = append(errs, j.validateEvents()...)
	if len(errs) == 0 {
		errs = append(errs, j.validateIdleKeys()...) // on a job otherwise valid: its seeds are read
	}
	return errs
}

// validateDialect refuses what the chosen preset cannot do: prefixes
// outside the contract's dialect, seeds and edges of endpoints the dialect
// does not have, and secUid seeds where follow lists are addressed
// otherwise.
func (j *Job) validateDialect() Errors {
	var errs Errors
	preset := cmp.Or(j.API.Preset, sources.PresetContract)
	if preset != sources.PresetContract && j.has("api.prefixes") {
		errs = append(errs, &Error{Key: "api.prefixes", Msg: fmt.Sprintf("applies to the %s preset only: under %s each endpoint's path is whole; "+
			"change one with api.endpoints.<platform>.<endpoint>.path", sources.PresetContract, preset)})
	}
	errs = append(errs, kinds.Unserved(&j.Seeds, j)...)
	if len(j.Seeds.ShortVideo.SecUIDs) > 0 || j.Seeds.Files["seeds.shortvideo.sec_uids"] != nil {
		for _, kind := range []string{kinds.KindSVFollowers, kinds.KindSVFollowing} {
			if by := j.SentAs(kind, "secUid"); by != "secUid" {
				errs = append(errs, &Error{Key: "seeds.shortvideo.sec_uids", Msg: fmt.Sprintf(
					"the %s preset addresses %s lists by %s (the endpoint takes no secUid parameter): list the accounts under seeds.shortvideo.profiles instead",
					preset, kind, by)})
				break
			}
		}
	}
	return errs
}
