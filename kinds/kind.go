package kinds

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/sources"
)

// Kind declares a task kind once: its name, the job-file seeds that start
// it, how a task of it fetches a page and maps it to rows and child tasks,
// and whether it is a list. Each kind is registered by one register call
// in kinds_<platform>.go, the way river registers a worker per job kind
// (AddWorker, JobArgs.Kind): the runner, the seed loop and job validation
// know kinds only through the registry.
type Kind struct {
	// Name is the kind as stored in crawl.tasks, "<platform>.<endpoint>".
	Name string
	// List marks a paginated kind: its tasks walk pages, each committed
	// with the next cursor, up to a page limit. Other kinds fetch one
	// object.
	List bool
	// Pages is the expand key whose max_pages bounds the kind's lists ("",
	// or an edge that is off: limits.max_pages); its stop_at_seen applies
	// when the kind has Seen. Lists only.
	Pages string
	// Seeds, when set, is the job-file list whose values start tasks of
	// this kind (see seedsOf and seedFlag).
	Seeds *SeedList
	// Call is how a task of the kind asks for its next page (or its
	// object) and maps the answer to rows, child tasks and how the task
	// goes on: a call, then a pure mapping (endpoint).
	Call fetcher
	// Fresh, when set, lets refresh_after skip a task of the kind whose
	// entity another run fetched within the task's window, and says how
	// the skipped task expands from stored data (reuse.go).
	Fresh *FreshRule
	// Seen, when set, marks a list returned newest first: stop_at_seen
	// ends it at a page of entries earlier runs stored (reuse.go).
	Seen SeenFunc
	// Dated marks a list returned newest first whose entries carry the
	// time they were posted: its edge takes posted_after and
	// posted_before (window.go).
	Dated bool
	// Reexpand, when set, gives the tasks a task of the kind creates, from
	// what its fetch in this run stored, at the task's (smaller) depth: a
	// task found again closer to a seed after it was fetched is expanded
	// again without a request, so what a run reaches does not depend on
	// which worker found it first (reuse.go).
	// A kind whose Fresh rule expands from stored data re-expands from the
	// same unless it declares otherwise (register).
	Reexpand ReexpandFunc
	// Known, when set on a list kind, gives the tasks the list leads to
	// as the job's runs up to the task's know it: the entries runs within
	// max_age saw, newest first, within its page limit.
	// Under adaptive revisits a list the schedule skips, or stop_at_seen
	// cuts, still leads to its entries, each of which the schedule decides
	// (reuse.go).
	Known KnownFunc
	// Change, when set, marks a content list bought again only when its
	// counter moved (reuse.go, ChangeRule).
	Change *ChangeRule
}

// Reexpandable are the kinds that declare Reexpand.
func Reexpandable() []string {
	var out []string
	for name, k := range registry {
		if k.Reexpand != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// registry holds every kind by name; seedLists holds their seed lists in
// the order of the fields of Seeds (the order seeds become tasks).
var (
	registry  = map[string]*Kind{}
	seedLists []*SeedList
)

// register adds k to the registry. It panics on a duplicate name or a seed
// list whose key names no field of Seeds of the right type, so a mistake
// stops every test at once.
func register(k *Kind) *Kind {
	if k.Name == "" || k.Call == nil {
		panic("kinds: register: a kind needs a name and a call")
	}
	if _, dup := registry[k.Name]; dup {
		panic("kinds: register: kind " + k.Name + " registered twice")
	}
	registry[k.Name] = k
	if k.Reexpand == nil && k.Fresh != nil && k.Fresh.Expand != nil {
		k.Reexpand = reexpandBy(k.Fresh.Expand)
	}
	if s := k.Seeds; s != nil {
		s.kind = k
		s.index = seedField(s.Key, s.typ)
		seedLists = append(seedLists, s)
		slices.SortFunc(seedLists, func(a, b *SeedList) int { return slices.Compare(a.index, b.index) })
		if s.text != nil {
			fileLists[s.Key+FileSuffix] = s
		}
	}
	return k
}

// kindOf returns the registered kind named name, or nil.
func Of(name string) *Kind { return registry[name] }

// kindNamed is kindOf for a name the code itself writes (a child task's
// kind): an unknown one is a programming error.
func named(name string) *Kind {
	k := registry[name]
	if k == nil {
		panic("kinds: unknown kind " + name)
	}
	return k
}

// Fetch fetches t's next page (or its object) under lease l and maps the
// answer for job j.
func (k *Kind) Fetch(ctx context.Context, c *sources.Client, l sources.Lease, j Job, t *Task) (*Result, error) {
	return k.Call.fetch(ctx, c, l, &mapper{job: j}, t)
}

// Replay maps body, the archived answer to the request endpoint?query made
// for t's page, for job j, with no request; ErrReplayMismatch when the
// kind would now ask something else for it.
func (k *Kind) Replay(j Job, t *Task, endpoint, query string, body []byte) (*Result, error) {
	return k.Call.replay(&mapper{job: j}, t, endpoint, query, body)
}

// All is every registered kind, by name.
func All() []*Kind {
	out := slices.Collect(maps.Values(registry))
	slices.SortFunc(out, func(a, b *Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// SeedLists are the job file's seed lists, in the order of Seeds' fields.
func SeedLists() []*SeedList { return slices.Clone(seedLists) }

// Kind is the kind whose tasks the seed list starts.
func (s *SeedList) Kind() *Kind { return s.kind }

// Task is a task of kind k at depth with the page limit the job gives its
// lists (0, no limit, for an object).
func (k *Kind) Task(j Job, key string, params map[string]string, depth int) NewTask {
	return k.task(j, key, params, depth)
}

// task is a task of kind k at depth with the page limit the job gives its
// lists (0, no limit, for an object).
func (k *Kind) task(j Job, key string, params map[string]string, depth int) NewTask {
	t := NewTask{Kind: k.Name, Key: key, Params: params, Depth: depth}
	if k.List {
		var e *Edge
		if k.Pages != "" {
			e = j.Edge(k.Pages)
		}
		t.MaxPages = j.ListPages(e)
	}
	return t
}

// SeedList is a list of seeds in the job file: the field of Seeds at Key,
// how one value is validated, and how it becomes tasks.
type SeedList struct {
	// Key is the job-file key, e.g. "seeds.photosocial.embeds": the field
	// of Seeds with that yaml path holds the values.
	Key string

	typ   reflect.Type // of the field
	kind  *Kind
	index []int // of the field in Seeds
	// each calls f with every value (a flag: once when it is on).
	each func(v reflect.Value, f func(i int, val any))
	// check says what is wrong with a value ("" when nothing); the message
	// is keyed by Key[i].
	check func(val any) string
	// tasks turns a valid value into the run's first tasks.
	tasks func(j Job, k *Kind, val any) []NewTask
	// text makes a value of a line of a seed file (seedfile.go); nil: the
	// list has no file key.
	text func(string) any
}

// seedsOf declares the seed list at key, a field of Seeds of type []T:
// check says what is wrong with one value ("" when nothing; the message
// is keyed by key[i]), tasks turns a valid value into tasks of k.
func seedsOf[T any](key string, check func(T) string, tasks func(j Job, k *Kind, v T) []NewTask) *SeedList {
	return &SeedList{
		Key: key,
		typ: reflect.TypeFor[[]T](),
		each: func(v reflect.Value, f func(int, any)) {
			for i, val := range v.Interface().([]T) {
				f(i, val)
			}
		},
		check: func(val any) string { return check(val.(T)) },
		tasks: func(j Job, k *Kind, val any) []NewTask { return tasks(j, k, val.(T)) },
		text:  textOf[T](),
	}
}

// seedFlag declares the flag at key, a bool field of Seeds: when true, one
// task of the kind with key taskKey.
func seedFlag(key, taskKey string) *SeedList {
	return &SeedList{
		Key: key,
		typ: reflect.TypeFor[bool](),
		each: func(v reflect.Value, f func(int, any)) {
			if v.Bool() {
				f(-1, true)
			}
		},
		check: func(any) string { return "" },
		tasks: func(j Job, k *Kind, _ any) []NewTask { return []NewTask{k.task(j, taskKey, nil, 0)} },
	}
}

// seedKey is the tasks of a seed that is one task of its kind, keyed by
// norm(value).
func seedKey(norm func(string) string) func(j Job, k *Kind, v string) []NewTask {
	return func(j Job, k *Kind, v string) []NewTask { return []NewTask{k.task(j, norm(v), nil, 0)} }
}

// seedField resolves a dotted seeds key to the index of its field in
// Seeds, by the yaml tags the job decoder reads.
func seedField(key string, want reflect.Type) []int {
	path, ok := strings.CutPrefix(key, "seeds.")
	if !ok {
		panic("kinds: seed key " + key + " is not under seeds.")
	}
	t := reflect.TypeFor[Seeds]()
	var index []int
	for _, name := range strings.Split(path, ".") {
		if t.Kind() != reflect.Struct {
			panic("kinds: seed key " + key + " is too deep")
		}
		idx, ok := yamlstrict.Fields(t)[name]
		if !ok {
			panic("kinds: seed key " + key + " names no field of Seeds")
		}
		index = append(index, idx...)
		t = t.FieldByIndex(idx).Type
	}
	if t != want {
		panic(fmt.Sprintf("kinds: seed key %s is a %s, not %s", key, t, want))
	}
	return index
}

// Validate checks every seed and that there is at least one (a seed file
// counts; its values are checked by SeedFile.Check). Every string
// in the file already passed checkText (valid UTF-8, no control
// characters, at most MaxStringBytes); each kind's check adds its own
// shape and cap, so nothing the upstream or the database would refuse
// reaches them.
func (s *Seeds) Validate() yamlstrict.Errors {
	var errs yamlstrict.Errors
	n := 0
	v := reflect.ValueOf(s).Elem()
	for _, l := range seedLists {
		l.each(v.FieldByIndex(l.index), func(i int, val any) {
			n++
			if msg := l.check(val); msg != "" {
				errs = append(errs, &yamlstrict.Error{Key: fmt.Sprintf("%s[%d]", l.Key, i), Msg: msg})
			}
		})
	}
	for _, f := range s.FileList() {
		n++
		errs = append(errs, f.validate()...)
	}
	if n == 0 && len(errs) == 0 {
		errs = append(errs, &yamlstrict.Error{Key: "seeds", Msg: "no seeds: list at least one, e.g. seeds.shortvideo.profiles"})
	}
	return errs
}

// SeedTasks turns a job's inline seeds into the run's first tasks, at
// depth 0, in the order of the fields of Seeds. Seed files are not read
// here: they may hold millions of values, which pipeline seeds in batches
// from SeedFile.Open.
func SeedTasks(seeds *Seeds, job Job) []NewTask { return SeedTasksOf(seeds, job, "") }

// SeedTasksOf is SeedTasks of the seed list keyed key ("seeds.shortvideo.profiles"),
// or of them all when key is "".
func SeedTasksOf(seeds *Seeds, job Job, key string) []NewTask {
	var out []NewTask
	v := reflect.ValueOf(seeds).Elem()
	for _, l := range seedLists {
		if key != "" && l.Key != key {
			continue
		}
		l.each(v.FieldByIndex(l.index), func(_ int, val any) {
			for _, t := range l.tasks(job, l.kind, val) {
				t.RefreshAfter = job.Window(l.Key)
				out = append(out, t)
			}
		})
	}
	return out
}

// fetcher is how a kind's task is fetched and mapped: fetch calls the
// upstream under the page's lease, replay maps an archived answer with no
// call at all. endpoint is the one implementation.
type fetcher interface {
	fetch(ctx context.Context, c *sources.Client, l sources.Lease, m *mapper, t *Task) (*Result, error)
	replay(m *mapper, t *Task, endpoint, query string, body []byte) (*Result, error)
	// request is the endpoint and query t's next call asks (the archive's
	// key of its answer).
	request(t *Task) (endpoint, query string)
}

// endpoint declares a kind's call and its mapping: call is the request
// for t's next page (or its object); mapTo maps the decoded answer to rows
// and child tasks, with no I/O, so that a mapping is tested from JSON
// alone and replayed from the archive.
type endpoint[A any] struct {
	call  func(t *Task) sources.Call[A]
	mapTo func(m *mapper, t *Task, a A) (*Result, error)
	// early, when set, ends t without a request when it returns a Result
	// (a cursor that asks for nothing the upstream could answer).
	early func(t *Task) *Result
}

func (e *endpoint[A]) fetch(ctx context.Context, c *sources.Client, l sources.Lease, m *mapper, t *Task) (*Result, error) {
	if e.early != nil {
		if res := e.early(t); res != nil {
			return res, nil
		}
	}
	a, err := sources.Do(ctx, c, l, e.call(t))
	if err != nil {
		return nil, err
	}
	return e.mapTo(m, t, a)
}

func (e *endpoint[A]) request(t *Task) (string, string) {
	call := e.call(t)
	return call.Endpoint(), call.Query()
}

// ErrReplayMismatch: the archived page answered another request than the
// one the kind asks for the task (its code changed since).
var ErrReplayMismatch = errors.New("replay: the archived page answers another request")

func (e *endpoint[A]) replay(m *mapper, t *Task, endpoint, query string, body []byte) (*Result, error) {
	if e.early != nil {
		if res := e.early(t); res != nil {
			return res, nil
		}
	}
	call := e.call(t)
	if call.Endpoint() != endpoint || call.Query() != query {
		return nil, fmt.Errorf("%w: the kind asks %s?%s; the archive holds %s?%s", ErrReplayMismatch, call.Endpoint(), call.Query(), endpoint, query)
	}
	a, err := call.Decode(body)
	if err != nil {
		return nil, err
	}
	return e.mapTo(m, t, a)
}

// mapped declares a kind's endpoint: call, then mapTo.
func mapped[A any](call func(t *Task) sources.Call[A], mapTo func(m *mapper, t *Task, a A) (*Result, error)) fetcher {
	return &endpoint[A]{call: call, mapTo: mapTo}
}

// byKey: an object called by the task's key.
func byKey[A any](call func(key string) sources.Call[A], mapTo func(m *mapper, t *Task, a A) (*Result, error)) fetcher {
	return mapped(func(t *Task) sources.Call[A] { return call(t.Key) }, mapTo)
}

// byKeyCursor: a list called by the task's key and cursor.
func byKeyCursor[A any](call func(key, cursor string) sources.Call[A], mapTo func(m *mapper, t *Task, a A) (*Result, error)) fetcher {
	return mapped(func(t *Task) sources.Call[A] { return call(t.Key, t.Cursor) }, mapTo)
}

// noKey: a call without parameters (a feed).
func noKey[A any](call func() sources.Call[A], mapTo func(m *mapper, t *Task, a A) (*Result, error)) fetcher {
	return mapped(func(*Task) sources.Call[A] { return call() }, mapTo)
}

// mapper maps decoded answers to rows and child tasks for a job: which
// edges it follows, at what depth and with which windows. Pure: no I/O.
type mapper struct{ job Job }
