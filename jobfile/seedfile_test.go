package jobfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/kinds"
)

// seedJob writes files (name -> content) and the job file j.yaml whose
// seeds section is seeds into a temporary directory, and loads the job.
func seedJob(t *testing.T, seeds string, files map[string]string) (*Job, string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "j.yaml")
	job := "name: files\napi: {base_url: https://h/api}\nseeds:\n" + seeds
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Load(path)
	return j, dir, err
}

// fileValues reads every value of the job's seed files, in order.
func fileValues(t *testing.T, j *Job) []string {
	t.Helper()
	var out []string
	for _, f := range j.Seeds.FileList() {
		r, err := f.Open(0)
		if err != nil {
			t.Fatal(err)
		}
		for {
			v, _, err := r.Next()
			if err != nil {
				break
			}
			out = append(out, f.List().Key+"="+v)
		}
		r.Close()
	}
	return out
}

func TestSeedFileTextAndCSV(t *testing.T) {
	t.Parallel()
	j, _, err := seedJob(t, `  shortvideo:
    profiles: ["@alice"]
    profiles_file: handles.txt
    keyword_searches_file: {path: lists/searches.txt}
  photosocial:
    posts_file: {path: posts.csv, column: url}
`, map[string]string{
		"handles.txt":        "\ufeff# a comment\n@bob\n\n  carol  \r\n#@not_this\ndave",
		"lists/searches.txt": "street food\n",
		"posts.csv":          "id,url\n1,https://p.example/p/A/\n2,\n3,\"https://p.example/p/B/\"\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := fileValues(t, j)
	want := []string{"seeds.shortvideo.profiles=@bob", "seeds.shortvideo.profiles=carol", "seeds.shortvideo.profiles=dave",
		"seeds.shortvideo.keyword_searches=street food",
		"seeds.photosocial.posts=https://p.example/p/A/", "seeds.photosocial.posts=https://p.example/p/B/"}
	if !slices.Equal(got, want) {
		t.Errorf("values:\n got %q\nwant %q", got, want)
	}
	if f := j.Seeds.Files["seeds.shortvideo.profiles"]; f.Values != 3 || len(f.SHA256) != 64 {
		t.Errorf("profiles file: %d values, sha %q", f.Values, f.SHA256)
	}
	// The inline list is still there; the file's tasks are the list's.
	if ts := j.SeedTasks(); len(ts) != 1 || ts[0].Key != "alice" {
		t.Errorf("inline seed tasks = %+v", ts)
	}
	f := j.Seeds.Files["seeds.shortvideo.profiles"]
	if ts := f.Tasks(j, "@bob"); len(ts) != 1 || ts[0].Kind != kinds.KindSVProfile || ts[0].Key != "bob" {
		t.Errorf("file seed tasks = %+v", ts)
	}
	kw := j.Seeds.Files["seeds.shortvideo.keyword_searches"]
	if ts := kw.Tasks(j, "street food"); len(ts) != 1 || ts[0].Kind != kinds.KindSVKeywordSearch {
		t.Errorf("keyword file tasks = %+v", ts)
	}
}

// A seed file's bad values are errors at their own line, keyed by the
// job-file key; the file's own problems at the job file's line of the key.
func TestSeedFileErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 70<<10)
	for _, c := range []struct {
		name, seeds string
		files       map[string]string
		want        []string // each a suffix of "j.yaml"- or file-relative error lines
	}{
		{"bad lines", "  shortvideo:\n    profiles_file: handles.txt\n",
			map[string]string{"handles.txt": "alice\n@@x\n\nbob\nhas space\n" + strings.Repeat("x", 70) + "\n"},
			[]string{
				`handles.txt:2: seeds.shortvideo.profiles_file: "@@x" is not a handle (letters, digits, . and _, optionally after @)`,
				`handles.txt:5: seeds.shortvideo.profiles_file: "has space" is not a handle (letters, digits, . and _, optionally after @)`,
				`handles.txt:6: seeds.shortvideo.profiles_file: "` + strings.Repeat("x", 60) + `…" is 70 bytes long; a handle is at most 64`,
			}},
		{"control character", "  photosocial:\n    reels_searches_file: s.txt\n",
			map[string]string{"s.txt": "ok\nbad\x01one\n"},
			[]string{`s.txt:2: seeds.photosocial.reels_searches_file: "bad\x01one" contains the control character U+0001 at byte 3`}},
		{"missing", "  shortvideo:\n    profiles: [a]\n    profiles_file: nope.txt\n", nil,
			[]string{`j.yaml:6: seeds.shortvideo.profiles_file: cannot open nope.txt: no such file or directory`}},
		{"escaping", "  shortvideo:\n    profiles_file: ../etc/passwd\n", nil,
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file: "../etc/passwd" is outside the job file's directory: a seed file must be in it or below it (relative, no ..)`}},
		{"absolute", "  shortvideo:\n    profiles_file: /etc/passwd\n", nil,
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file: "/etc/passwd" is outside the job file's directory`}},
		{"csv without column", "  shortvideo:\n    profiles_file: a.csv\n", map[string]string{"a.csv": "handle\nalice\n"},
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file: "a.csv" is a CSV file: name its column, e.g. {path: a.csv, column: handle}`}},
		{"no such column", "  shortvideo:\n    profiles_file: {path: a.csv, column: user}\n", map[string]string{"a.csv": "handle,n\nalice,1\n"},
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file: a.csv has no column "user" (its header: handle, n)`}},
		{"ragged csv", "  shortvideo:\n    profiles_file: {path: a.csv, column: handle}\n", map[string]string{"a.csv": "handle,n\nalice,1\nbob\n"},
			[]string{`a.csv:3: seeds.shortvideo.profiles_file: not valid CSV: wrong number of fields`}},
		{"unclosed quote", "  shortvideo:\n    profiles_file: {path: a.csv, column: handle}\n", map[string]string{"a.csv": "handle\nalice\n\"bob\n" + strings.Repeat("x\n", 600_000)},
			[]string{`a.csv: seeds.shortvideo.profiles_file: a CSV record is longer than 1048576 bytes (an unclosed quote?)`}},
		{"empty", "  shortvideo:\n    profiles_file: e.txt\n", map[string]string{"e.txt": "# nothing\n\n"},
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file: e.txt holds no value (every line is blank or a # comment)`}},
		{"long line", "  shortvideo:\n    profiles_file: l.txt\n", map[string]string{"l.txt": "a\n" + long + "\n"},
			[]string{`l.txt:2: seeds.shortvideo.profiles_file: the line is longer than 65536 bytes`}},
		{"flag has no file", "  shortvideo:\n    profiles: [a]\n    trending_feed_file: x.txt\n", nil,
			[]string{`j.yaml:6: seeds.shortvideo.trending_feed_file: unknown key`}},
		{"duplicate", "  shortvideo:\n    profiles_file: a.txt\n    profiles_file: b.txt\n", map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
			[]string{`j.yaml:6: seeds.shortvideo.profiles_file: duplicate key (first at line 5)`}},
		{"wrong type", "  shortvideo:\n    profiles_file: [a.txt]\n", nil,
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file: expected a file name, or a mapping with path and column, got a list`}},
		{"unknown option", "  shortvideo:\n    profiles_file: {path: a.txt, colum: x}\n", map[string]string{"a.txt": "a\n"},
			[]string{`j.yaml:5: seeds.shortvideo.profiles_file.colum: unknown key (did you mean column?)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, dir, err := seedJob(t, c.seeds, c.files)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			got = strings.ReplaceAll(got, dir, "DIR")
			lines := strings.Split(got, "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("errors:\n%s\nwant %d:\n%s", got, len(c.want), strings.Join(c.want, "\n"))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d:\n got %s\nwant %s", i, lines[i], w)
				}
			}
		})
	}
}

// A symbolic link beside the job that leads out of its directory is
// refused like a path with ..: a job file cannot read other files.
func TestSeedFileSymlinkEscape(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "h.txt")
	if err := os.WriteFile(outside, []byte("alice\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "h.txt")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "j.yaml")
	os.WriteFile(path, []byte("name: x\napi: {base_url: https://h/api}\nseeds:\n  shortvideo:\n    profiles_file: h.txt\n"), 0o644)
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "j.yaml:5: seeds.shortvideo.profiles_file: ") || !strings.Contains(err.Error(), "leads outside the job file's directory") {
		t.Fatalf("err = %v", err)
	}
}

// Only seed files: the job has seeds; sec_uids from a file are refused by
// the real preset like inline ones.
func TestSeedFileCountsAsSeeds(t *testing.T) {
	t.Parallel()
	if _, _, err := seedJob(t, "  photosocial:\n    embeds_file: e.txt\n", map[string]string{"e.txt": "natgeo\n"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.txt"), []byte("MS4wLjABAAAAxyz\n"), 0o644)
	path := filepath.Join(dir, "j.yaml")
	os.WriteFile(path, []byte("name: x\napi: {preset: scrapecreators}\nseeds:\n  shortvideo:\n    sec_uids_file: s.txt\n"), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "seeds.shortvideo.sec_uids: the scrapecreators preset addresses") {
		t.Fatalf("err = %v", err)
	}
}
