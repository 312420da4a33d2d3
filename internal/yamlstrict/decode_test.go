package yamlstrict

import (
	"reflect"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// A field added to a job struct is decoded and checked (unknown keys, wrong
// types, presence) without code of its own.
func TestDecoderIsGeneric(t *testing.T) {
	t.Parallel()
	type extra struct {
		Window  time.Duration     `yaml:"outage_window"`
		MaxBody *int64            `yaml:"max_body_bytes"`
		Tags    map[string]string `yaml:"tags"`
		Inner   struct {
			Depth int32 `yaml:"depth"`
		} `yaml:"inner"`
	}
	decode := func(text string) (extra, *Decoder) {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(text), &root); err != nil {
			t.Fatal(err)
		}
		var v extra
		d := NewDecoder("e.yaml")
		d.Decode(root.Content[0], reflect.ValueOf(&v).Elem(), "api", 0)
		d.errs.Sort()
		return v, d
	}
	v, d := decode("outage_window: 2m\nmax_body_bytes: 0\ntags: {a: b}\ninner: {depth: 7}\n")
	if len(d.errs) != 0 || time.Duration(v.Window) != 2*time.Minute || v.MaxBody == nil || *v.MaxBody != 0 || v.Tags["a"] != "b" || v.Inner.Depth != 7 ||
		!d.present["api.max_body_bytes"] || d.present["api.nothing"] {
		t.Errorf("decoded %+v, errors %v, present %v", v, d.errs, d.present)
	}
	_, d = decode("outage_window: [1]\nmax_body_bytes: x\ntags: {a: [b]}\ninner: {depth: 2147483648, deep: 1}\noutage_windows: 1s\n")
	want := "e.yaml:1: api.outage_window: expected a duration like 30s, 2m or 7d, got a list\n" +
		"e.yaml:2: api.max_body_bytes: expected an integer, got \"x\"\n" +
		"e.yaml:3: api.tags.a: expected a string, got a list\n" +
		"e.yaml:4: api.inner.deep: unknown key\n" +
		"e.yaml:4: api.inner.depth: 2147483648 is out of range (at most 2147483647)\n" +
		"e.yaml:5: api.outage_windows: unknown key (did you mean outage_window?)"
	if d.errs.Error() != want {
		t.Errorf("errors\n%v\nwant\n%s", d.errs, want)
	}
}
