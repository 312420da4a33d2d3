package yamlstrict

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Unmarshal decodes data, a YAML document named path in errors, into v
// (a pointer to a struct), strictly: every problem found (a syntax error, a
// raw byte YAML refuses, an unknown key, a wrong type, a value past a cap)
// is an Error with its line and dotted key, as Errors sorted by line. doc
// is the document's node tree (LineOf locates the keys of later checks);
// present holds the dotted paths of the keys written outside lists, so an
// explicit zero is told apart from an absent key.
//
// Values of the durations types (and of time.Duration) are written as
// "90s" or "2m" and must not be negative.
func Unmarshal(path string, data []byte, v any, durations ...reflect.Type) (doc *yaml.Node, present map[string]bool, err error) {
	if n := roughValues(data); n > 2*MaxValues {
		return nil, nil, Errors{{File: path, Msg: fmt.Sprintf("the file holds more than %d values; job files are capped there", MaxValues)}}
	}
	data, bad := cleanRawText(data)
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		if bad != nil {
			return nil, nil, Errors{{File: path, Line: bad.line, Msg: bad.msg}}
		}
		return nil, nil, Errors{syntaxError(path, err)}
	}
	if bad != nil {
		var key string
		if len(root.Content) > 0 {
			key = NodeAt(root.Content[0], bad.line, bad.col)
		}
		return nil, nil, Errors{{File: path, Line: bad.line, Key: key, Msg: bad.msg}}
	}
	if len(root.Content) == 0 {
		return nil, nil, Errors{{File: path, Line: 1, Msg: "the job file is empty"}}
	}
	doc = root.Content[0]
	d := NewDecoder(path)
	for _, t := range durations {
		d.durations[t] = true
	}
	d.Decode(doc, reflect.ValueOf(v).Elem(), "", 0)
	if len(d.errs) > 0 {
		d.errs.Sort()
		if d.overflow {
			d.errs = append(d.errs, &Error{File: path, Msg: fmt.Sprintf("more errors follow; these are the first %d", MaxErrors)})
		}
		return nil, nil, d.errs
	}
	return doc, d.present, nil
}

// Error is a problem in a job file, located by key path and line.
type Error struct {
	File string
	Line int
	Key  string // dotted path, e.g. "limits.workers"
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	var b strings.Builder
	for _, part := range []string{loc, e.Key} {
		if part != "" {
			b.WriteString(part + ": ")
		}
	}
	return b.String() + e.Msg
}

// Errors is every problem found in a job file, in the order of lines.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

func (es Errors) Sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Key, b.Key))
	})
}

// rawTextError is a byte that yaml refuses without saying where (invalid
// UTF-8, a control character written raw), at a 1-based line and column.
type rawTextError struct {
	line, col int
	msg       string
}

// cleanRawText replaces each byte yaml would refuse with '?' (offsets, lines
// and columns stay put), so the file can still be parsed and the key that
// holds the first such byte named; it reports the first.
func cleanRawText(data []byte) ([]byte, *rawTextError) {
	var first *rawTextError
	var clean []byte
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		var msg string
		switch {
		case r == utf8.RuneError && size <= 1:
			msg = fmt.Sprintf("is not valid UTF-8 (byte 0x%02x)", data[i])
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f, r >= 0x80 && r < 0xa0 && r != 0x85:
			msg = fmt.Sprintf("contains the control character %U", r)
		}
		if msg != "" {
			if first == nil {
				first = &rawTextError{line: line, col: col, msg: msg}
				clean = slices.Clone(data)
			}
			for k := range size {
				clean[i+k] = '?'
			}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	if first == nil {
		return data, nil
	}
	return clean, first
}

// NodeAt is the dotted path of the last node that starts at or before
// line:col (so the one holding that position), or "".
func NodeAt(root *yaml.Node, line, col int) string {
	best, bestLine, bestCol := "", 0, 0
	consider := func(n *yaml.Node, path string) {
		if (n.Line < line || n.Line == line && n.Column <= col) && (n.Line > bestLine || n.Line == bestLine && n.Column >= bestCol) {
			best, bestLine, bestCol = path, n.Line, n.Column
		}
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		consider(n, path)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				kp := JoinKey(path, n.Content[i].Value)
				consider(n.Content[i], kp)
				walk(n.Content[i+1], kp)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(root, "")
	return best
}

var syntaxLineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError locates a YAML syntax error, the one problem found before
// there is a node tree to take positions from.
func syntaxError(path string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	je := &Error{File: path, Msg: "not valid YAML: " + msg}
	if m := syntaxLineRe.FindStringSubmatch(msg); m != nil {
		je.Line, _ = strconv.Atoi(m[1])
		je.Msg = "not valid YAML: " + m[2]
	}
	return je
}

// Caps of a job file: its size, and the values it may hold with YAML aliases
// expanded (so a "billion laughs" file is refused after MaxValues nodes,
// in bounded time and memory). MaxStringBytes caps any string in the file;
// some keys have smaller caps (see validate).
const (
	MaxJobFileBytes = 1 << 20
	MaxValues       = 100_000
	MaxStringBytes  = 2048
	maxNesting      = 64
)

// roughValues bounds from above the nodes yaml builds from data: every node
// but the root follows one of these bytes (a mapping pair follows its
// ':'; a collection's first item its bracket). Strings and comments holding
// them only raise the bound, so a file is refused on it only well past any
// real job (see ParseJobWith): parsing costs ~300 bytes of memory a node,
// and this bounds that before yaml builds the tree.
func roughValues(data []byte) int {
	n := 1
	for _, c := range data {
		switch c {
		case ',', '-', '?', '*', '&':
			n++
		case ':', '[', '{':
			n += 2
		}
	}
	return n
}

// Unmarshaler is a type that decodes itself from a node (a duration, a
// keyword search in either form).
type Unmarshaler interface {
	DecodeYAML(d *Decoder, n *yaml.Node, path string, depth int)
}

// Decoder decodes a node tree into a value, collecting every error.
type Decoder struct {
	file      string
	errs      Errors
	values    int
	exhausted bool // stop decoding: too many values or errors
	overflow  bool // errors past MaxErrors were dropped
	// present holds the dotted paths of the keys written outside lists, so
	// an explicit zero is told apart from an absent key.
	present   map[string]bool
	expanding map[*yaml.Node]bool
	durations map[reflect.Type]bool
}

// NewDecoder is a decoder of the document named file in errors.
func NewDecoder(file string) *Decoder {
	return &Decoder{file: file, present: map[string]bool{}, expanding: map[*yaml.Node]bool{},
		durations: map[reflect.Type]bool{reflect.TypeFor[time.Duration](): true}}
}

// MaxErrors bounds the errors reported for one file.
const MaxErrors = 50

func (d *Decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	if d.exhausted {
		return
	}
	if len(d.errs) == MaxErrors {
		d.exhausted, d.overflow = true, true
		return
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Key: path, Msg: fmt.Sprintf(format, args...)})
}

func (d *Decoder) WrongType(n *yaml.Node, path, want string) {
	d.errorf(n, path, "expected %s, got %s", want, describeNode(n))
}

// visit counts n against the value budget and follows aliases; it returns
// nil when n must not be decoded.
func (d *Decoder) visit(n *yaml.Node, path string, depth int) *yaml.Node {
	for hops := 0; ; hops++ {
		if d.exhausted {
			return nil
		}
		if d.values++; d.values > MaxValues {
			d.errorf(n, path, "the file holds more than %d values (aliases expanded); job files are capped there", MaxValues)
			d.exhausted = true
			return nil
		}
		if depth > maxNesting {
			d.errorf(n, path, "nested deeper than %d levels", maxNesting)
			return nil
		}
		if n.Kind != yaml.AliasNode {
			return n
		}
		if n.Alias == nil || hops > maxNesting {
			d.errorf(n, path, "alias *%s cannot be resolved", ShortText(n.Value))
			return nil
		}
		n = n.Alias
	}
}

// decode sets v from n.
func (d *Decoder) Decode(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n = d.visit(n, path, depth); n == nil {
		return
	}
	// An anchor whose value contains an alias to itself would recurse
	// until the budget runs out; say what it is instead.
	if n.Anchor != "" {
		if d.expanding[n] {
			d.errorf(n, path, "alias *%s refers to a value that contains it", ShortText(n.Anchor))
			return
		}
		d.expanding[n] = true
		defer delete(d.expanding, n)
	}
	d.DecodeValue(n, v, path, depth)
}

// DecodeValue sets v from n, a node already visited.
func (d *Decoder) DecodeValue(n *yaml.Node, v reflect.Value, path string, depth int) {
	if d.durations[v.Type()] {
		d.decodeDuration(n, v, path)
		return
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(Unmarshaler); ok {
			nd.DecodeYAML(d, n, path, depth)
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.DecodeValue(n, v.Elem(), path, depth)
	case reflect.Struct:
		d.DecodeStruct(n, v, path, depth)
	case reflect.Slice:
		if IsNull(n) {
			return // a key without a value is an empty list
		}
		if n.Kind != yaml.SequenceNode {
			d.WrongType(n, path, "a list")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.Decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if IsNull(n) {
			return
		}
		if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
			d.WrongType(n, path, "a mapping")
			return
		}
		m := reflect.MakeMap(v.Type())
		seen := map[string]int{}
		for _, kv := range d.pairs(n, path, depth) {
			name, kp, ok := d.key(kv[0], path, seen)
			if !ok {
				continue
			}
			e := reflect.New(v.Type().Elem()).Elem()
			d.Decode(kv[1], e, kp, depth+1)
			m.SetMapIndex(reflect.ValueOf(name).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || IsNull(n) {
			d.WrongType(n, path, "a string")
			return
		}
		if msg := CheckText(n.Value); msg != "" {
			d.errorf(n, path, "%s", msg)
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || err != nil {
			d.WrongType(n, path, "true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.decodeInt(n, v, path)
	case reflect.Float32, reflect.Float64:
		f, ok := scalarFloat(n)
		if !ok {
			d.WrongType(n, path, "a number")
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || v.OverflowFloat(f) {
			d.errorf(n, path, "must be a finite number, got %s", describeNode(n))
			return
		}
		v.SetFloat(f)
	default:
		d.errorf(n, path, "cannot be set in a job file")
	}
}

// maxDays is the most days ParseDuration reads (a time.Duration holds
// about 292 years).
const maxDays = 106_000

// ParseDuration reads a Go duration (90s, 20h) or a number of days (30d,
// 1.5d), which windows of days read best in.
func ParseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.ParseFloat(n, 64); err == nil && !math.IsNaN(days) && math.Abs(days) <= maxDays {
			return time.Duration(days * float64(24*time.Hour)), nil
		}
	}
	return time.ParseDuration(s)
}

// decodeDuration reads "90s", "2m" or "30d" into a duration type.
func (d *Decoder) decodeDuration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || IsNull(n) {
		d.WrongType(n, path, "a duration like 30s, 2m or 7d")
		return
	}
	p, err := ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "%s is not a duration like 30s, 2m or 7d", describeNode(n))
		return
	}
	if p < 0 {
		d.errorf(n, path, "must not be negative, got %s", n.Value)
		return
	}
	v.SetInt(int64(p))
}

var digitsRe = regexp.MustCompile(`^[-+]?[0-9_]+$`)

func (d *Decoder) decodeInt(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || IsNull(n) {
		d.WrongType(n, path, "an integer")
		return
	}
	bits := v.Type().Bits()
	outOfRange := func() {
		d.errorf(n, path, "%s is out of range (at most %d)", ShortText(n.Value), int64(1)<<(bits-1)-1)
	}
	switch n.ShortTag() {
	case "!!int":
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil || v.OverflowInt(i) {
			outOfRange()
			return
		}
		v.SetInt(i)
	case "!!float":
		// yaml resolves an integer too large for 64 bits as a float.
		if digitsRe.MatchString(n.Value) {
			outOfRange()
			return
		}
		d.WrongType(n, path, "an integer")
	default:
		d.WrongType(n, path, "an integer")
	}
}

// scalarFloat reads a YAML number (.nan and .inf included).
func scalarFloat(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}
	v := strings.ReplaceAll(n.Value, "_", "")
	switch n.ShortTag() {
	case "!!int":
		if i, err := strconv.ParseInt(v, 0, 64); err == nil {
			return float64(i), true
		}
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	case "!!float":
		switch strings.ToLower(strings.TrimLeft(v, "+-")) {
		case ".nan":
			return math.NaN(), true
		case ".inf":
			return math.Inf(1), true
		}
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	return 0, false
}

// DecodeStruct decodes a mapping into a struct by its fields' yaml tags.
func (d *Decoder) DecodeStruct(n *yaml.Node, v reflect.Value, path string, depth int) {
	if IsNull(n) {
		return // a key without a value is an empty mapping
	}
	if n.Kind != yaml.MappingNode {
		if path == "" {
			d.errorf(n, "", "a job file is a mapping of keys (name, api, limits, seeds, expand), got %s", describeNode(n))
			return
		}
		d.WrongType(n, path, "a mapping")
		return
	}
	fields := Fields(v.Type())
	seen := map[string]int{}
	for _, kv := range d.pairs(n, path, depth) {
		name, kp, ok := d.key(kv[0], path, seen)
		if !ok {
			continue
		}
		idx, known := fields[name]
		if !known {
			msg := "unknown key"
			if s := closestKey(name, fields); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			d.errorf(kv[0], kp, "%s", msg)
			continue
		}
		if !strings.Contains(kp, "[") {
			d.present[kp] = true
		}
		d.Decode(kv[1], v.FieldByIndex(idx), kp, depth+1)
	}
}

// key checks a mapping key: a scalar, not seen before in this mapping. It
// returns the key's name and dotted path.
func (d *Decoder) key(k *yaml.Node, path string, seen map[string]int) (string, string, bool) {
	if k.Kind != yaml.ScalarNode {
		d.errorf(k, path, "a key must be a name, got %s", describeNode(k))
		return "", "", false
	}
	kp := JoinKey(path, k.Value)
	if line, dup := seen[k.Value]; dup {
		d.errorf(k, kp, "duplicate key (first at line %d)", line)
		return "", "", false
	}
	seen[k.Value] = k.Line
	return k.Value, kp, true
}

// pairs lists a mapping's key/value pairs with YAML merge keys (<<: *base)
// expanded: explicit keys win over merged ones, earlier merges over later.
func (d *Decoder) pairs(n *yaml.Node, path string, depth int) [][2]*yaml.Node {
	var explicit, merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
			explicit = append(explicit, [2]*yaml.Node{k, val})
			continue
		}
		m := d.visit(val, path, depth+1)
		if m == nil {
			continue
		}
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = nil
			for _, c := range m.Content {
				if c = d.visit(c, path, depth+1); c != nil {
					sources = append(sources, c)
				}
			}
		}
		for _, src := range sources {
			if src.Kind != yaml.MappingNode || d.expanding[src] {
				d.errorf(k, JoinKey(path, "<<"), "a merge key takes a mapping or a list of mappings, got %s", describeNode(src))
				continue
			}
			d.expanding[src] = true
			merged = append(merged, d.pairs(src, path, depth+1)...)
			delete(d.expanding, src)
		}
	}
	if len(merged) == 0 {
		return explicit
	}
	have := map[string]bool{}
	for _, kv := range explicit {
		have[kv[0].Value] = true
	}
	for _, kv := range merged {
		if !have[kv[0].Value] {
			have[kv[0].Value] = true
			explicit = append(explicit, kv)
		}
	}
	return explicit
}

// Fields maps the yaml keys of a struct type to its field indexes, as
// yaml.v3 names them: the tag's name, else the lowercased field name; "-"
// skips a field, ",inline" flattens an embedded struct.
func Fields(t reflect.Type) map[string][]int {
	fields := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			for k, idx := range Fields(f.Type) {
				fields[k] = append([]int{i}, idx...)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = []int{i}
	}
	return fields
}

// closestKey is the known key nearest to name (a typo: an edit distance of
// at most a quarter of the key, and at least 1), for a "did you mean" hint.
func closestKey(name string, fields map[string][]int) string {
	if len(name) > 64 {
		return ""
	}
	best, bestDist := "", math.MaxInt
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if dist := editDistance(name, k); dist <= max(1, len(k)/4) && dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var plainKeyRe = regexp.MustCompile(`^[A-Za-z0-9_\-]{1,64}$`)

// JoinKey appends a key to a dotted path; a key that is not a plain name
// is shown quoted and cut.
func JoinKey(path, key string) string {
	if !plainKeyRe.MatchString(key) {
		key = QuoteShort(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describeNode says what a node is, for "expected X, got Y".
func describeNode(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case IsNull(n):
		return "no value"
	case n.ShortTag() == "!!str":
		return QuoteShort(n.Value)
	}
	return ShortText(n.Value)
}

// CheckText is why a string cannot be stored or sent, or "".
func CheckText(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if len(s) > MaxStringBytes {
		return fmt.Sprintf("is %d bytes long; strings are at most %d bytes", len(s), MaxStringBytes)
	}
	for i, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Sprintf("%s contains the control character %U at byte %d", QuoteShort(s), r, i)
		}
	}
	return ""
}

// ShortText cuts s to 60 bytes at a rune boundary, for messages.
func ShortText(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// QuoteShort is s cut and quoted, for messages.
func QuoteShort(s string) string { return strconv.Quote(ShortText(s)) }

// LineOf is the line of the key at a dotted path in the tree, or of its
// nearest ancestor present, or 1.
func LineOf(root *yaml.Node, path string) int {
	line, n := 1, root
	for _, seg := range splitPath(path) {
		n = deref(n)
		if n == nil {
			break
		}
		var next *yaml.Node
		if seg.index >= 0 {
			if n.Kind == yaml.SequenceNode && seg.index < len(n.Content) {
				next = n.Content[seg.index]
				line = deref(next).Line
			}
		} else if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg.key {
					next = n.Content[i+1]
					line = n.Content[i].Line
					break
				}
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxNesting; i++ {
		n = n.Alias
	}
	return n
}

type pathSeg struct {
	key   string
	index int // -1 for a key
}

// splitPath splits "a.b[2].c" into a, b, [2], c.
func splitPath(path string) []pathSeg {
	var segs []pathSeg
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			segs = append(segs, pathSeg{key: key, index: -1})
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if err != nil {
				return segs
			}
			segs = append(segs, pathSeg{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return segs
}
