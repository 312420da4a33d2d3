package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
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
	// Pages is the expansion edge whose max_pages bounds the kind's lists
	// (nil, or an edge that is off: limits.max_pages). Lists only.
	Pages func(*Expand) *Edge
	// Seeds, when set, is the job-file list whose values start tasks of
	// this kind (see seedsOf and seedFlag).
	Seeds *SeedList
	// Fetch fetches the next page (or the object) of t and maps it to
	// rows, child tasks and how the task goes on.
	Fetch func(ctx context.Context, c *crawl, t *Task) (*result, error)
	// Fresh, when set, lets refresh_after skip a task of the kind whose
	// entity another run fetched within the task's window, and says how
	// the skipped task expands from stored data (reuse.go).
	Fresh *FreshRule
	// Seen, when set, marks a list returned newest first: stop_at_seen
	// ends it at a page of entries earlier runs stored (reuse.go).
	Seen SeenFunc
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
	if k.Name == "" || k.Fetch == nil {
		panic("pipeline: register: a kind needs a name and a fetch")
	}
	if _, dup := registry[k.Name]; dup {
		panic("pipeline: register: kind " + k.Name + " registered twice")
	}
	registry[k.Name] = k
	if s := k.Seeds; s != nil {
		s.kind = k
		s.index = seedField(s.Key, s.typ)
		seedLists = append(seedLists, s)
		slices.SortFunc(seedLists, func(a, b *SeedList) int { return slices.Compare(a.index, b.index) })
	}
	return k
}

// kindOf returns the registered kind named name, or nil.
func kindOf(name string) *Kind { return registry[name] }

// kindNamed is kindOf for a name the code itself writes (a child task's
// kind): an unknown one is a programming error.
func kindNamed(name string) *Kind {
	k := registry[name]
	if k == nil {
		panic("pipeline: unknown kind " + name)
	}
	return k
}

// task is a task of kind k at depth with the page limit the job gives its
// lists (0, no limit, for an object).
func (k *Kind) task(j *Job, key string, params map[string]string, depth int) NewTask {
	t := NewTask{Kind: k.Name, Key: key, Params: params, Depth: depth}
	if k.List {
		var e *Edge
		if k.Pages != nil && j.Expand != nil {
			e = k.Pages(j.Expand)
		}
		t.MaxPages = j.listPages(e)
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
	tasks func(j *Job, k *Kind, val any) []NewTask
}

// seedsOf declares the seed list at key, a field of Seeds of type []T:
// check says what is wrong with one value ("" when nothing; the message
// is keyed by key[i]), tasks turns a valid value into tasks of k.
func seedsOf[T any](key string, check func(T) string, tasks func(j *Job, k *Kind, v T) []NewTask) *SeedList {
	return &SeedList{
		Key: key,
		typ: reflect.TypeFor[[]T](),
		each: func(v reflect.Value, f func(int, any)) {
			for i, val := range v.Interface().([]T) {
				f(i, val)
			}
		},
		check: func(val any) string { return check(val.(T)) },
		tasks: func(j *Job, k *Kind, val any) []NewTask { return tasks(j, k, val.(T)) },
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
		tasks: func(j *Job, k *Kind, _ any) []NewTask { return []NewTask{k.task(j, taskKey, nil, 0)} },
	}
}

// seedKey is the tasks of a seed that is one task of its kind, keyed by
// norm(value).
func seedKey(norm func(string) string) func(j *Job, k *Kind, v string) []NewTask {
	return func(j *Job, k *Kind, v string) []NewTask { return []NewTask{k.task(j, norm(v), nil, 0)} }
}

// seedField resolves a dotted seeds key to the index of its field in
// Seeds, by the yaml tags the job decoder reads.
func seedField(key string, want reflect.Type) []int {
	path, ok := strings.CutPrefix(key, "seeds.")
	if !ok {
		panic("pipeline: seed key " + key + " is not under seeds.")
	}
	t := reflect.TypeFor[Seeds]()
	var index []int
	for _, name := range strings.Split(path, ".") {
		if t.Kind() != reflect.Struct {
			panic("pipeline: seed key " + key + " is too deep")
		}
		idx, ok := yamlFields(t)[name]
		if !ok {
			panic("pipeline: seed key " + key + " names no field of Seeds")
		}
		index = append(index, idx...)
		t = t.FieldByIndex(idx).Type
	}
	if t != want {
		panic(fmt.Sprintf("pipeline: seed key %s is a %s, not %s", key, t, want))
	}
	return index
}

// validate checks every seed and that there is at least one. Every string
// in the file already passed checkText (valid UTF-8, no control
// characters, at most MaxStringBytes); each kind's check adds its own
// shape and cap, so nothing the upstream or the database would refuse
// reaches them.
func (s *Seeds) validate() JobErrors {
	var errs JobErrors
	n := 0
	v := reflect.ValueOf(s).Elem()
	for _, l := range seedLists {
		l.each(v.FieldByIndex(l.index), func(i int, val any) {
			n++
			if msg := l.check(val); msg != "" {
				errs = append(errs, &JobError{Key: fmt.Sprintf("%s[%d]", l.Key, i), Msg: msg})
			}
		})
	}
	if n == 0 && len(errs) == 0 {
		errs = append(errs, &JobError{Key: "seeds", Msg: "no seeds: list at least one, e.g. seeds.shortvideo.profiles"})
	}
	return errs
}

// SeedTasks turns the job's seeds into the run's first tasks, at depth 0,
// in the order of the fields of Seeds.
func SeedTasks(job *Job) []NewTask {
	var out []NewTask
	v := reflect.ValueOf(&job.Seeds).Elem()
	for _, l := range seedLists {
		l.each(v.FieldByIndex(l.index), func(_ int, val any) {
			for _, t := range l.tasks(job, l.kind, val) {
				t.RefreshAfter = job.seedWindow(l.Key)
				out = append(out, t)
			}
		})
	}
	return out
}
