package sources

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
)

// The shape of answers, sampled so that a run can tell when the upstream's
// schema drifted (a key new, or gone, since the job's previous run): a
// dialect changes under its users without notice. A shape is the set of
// key paths of a 2xx body: "user.secUid", "aweme_list[].statistics.play_count"
// (an array is read through its first element). Reading a shape costs a
// few small parses, so the client samples: every one of the first
// ShapeSampleFirst answers of an endpoint, then one in ShapeSampleEvery.

const (
	ShapeSampleFirst = 20
	ShapeSampleEvery = 100
	// shapeDepth and shapeMaxKeys bound the work and the result whatever
	// a body holds; a key longer than shapeMaxKeyLen is cut.
	shapeDepth     = 4
	shapeMaxKeys   = 300
	shapeMaxKeyLen = 120
	// shapeMaxObject: an object larger than this is recorded, its members
	// not read (a scan of a huge field per level would cost more than the
	// sample is worth); arrays are read through their first element only.
	shapeMaxObject = 1 << 20
)

// shapeSampler decides which answers of each endpoint are sampled.
type shapeSampler struct {
	mu   sync.Mutex
	seen map[string]int64
}

func (s *shapeSampler) take(endpoint string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]int64{}
	}
	n := s.seen[endpoint]
	s.seen[endpoint] = n + 1
	return n < ShapeSampleFirst || n%ShapeSampleEvery == 0
}

// keyPaths is the shape of a body whose top level is e, sorted.
func (e envelope) keyPaths() []string {
	var out []string
	for k, v := range e {
		out = appendPaths(out, k, v, 1)
	}
	slices.Sort(out)
	return out
}

func appendPaths(out []string, path string, raw []byte, depth int) []string {
	if len(out) >= shapeMaxKeys {
		return out
	}
	if len(path) > shapeMaxKeyLen {
		path = path[:shapeMaxKeyLen]
	}
	out = append(out, path)
	raw = bytes.TrimSpace(raw)
	if depth >= shapeDepth || len(raw) == 0 {
		return out
	}
	switch raw[0] {
	case '{':
		var m map[string]RawRef
		if len(raw) > shapeMaxObject || json.Unmarshal(raw, &m) != nil {
			return out
		}
		for k, v := range m {
			out = appendPaths(out, path+"."+k, v, depth+1)
		}
	case '[':
		if first := firstElement(raw); len(first) > 0 && first[0] == '{' {
			var m map[string]RawRef
			if json.Unmarshal(first, &m) != nil {
				return out
			}
			for k, v := range m {
				out = appendPaths(out, path+"[]."+k, v, depth+1)
			}
		}
	}
	return out
}

// firstElement is the first element of a JSON array, read without
// scanning the rest of it.
func firstElement(arr []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(arr))
	if t, err := d.Token(); err != nil || t != json.Delim('[') || !d.More() {
		return nil
	}
	var v RawRef
	if d.Decode(&v) != nil {
		return nil
	}
	return bytes.TrimSpace(v)
}
