package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/socialcrawl/crawler/jobfile"
)

// The docs are checked as code: every relative link resolves, every job
// file shown loads, every crawler command line shown parses.

// docPages are the pages checked, relative to the repository root: the
// README, every page of docs/ and BENCHMARKS.md.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		pages[i], _ = filepath.Rel(root, p)
	}
	return append([]string{"README.md", "BENCHMARKS.md"}, pages...)
}

// mdBlock is a fenced code block of a page.
type mdBlock struct {
	info string // the info string: "yaml", "sh", "yaml fragment", ...
	line int    // the line of its opening fence
	text string
}

// mdPage is a page split into its fenced blocks and the prose around them.
type mdPage struct {
	blocks []mdBlock
	prose  []string // lines outside fenced blocks, blank where a block was
}

func readPage(t *testing.T, path string) mdPage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return splitPage(string(b))
}

func splitPage(text string) mdPage {
	var p mdPage
	var cur *mdBlock
	var body []string
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur, body = &mdBlock{info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1}, nil
			p.prose = append(p.prose, "")
		case cur != nil && trimmed == "```":
			cur.text = strings.Join(body, "\n") + "\n"
			p.blocks = append(p.blocks, *cur)
			cur = nil
			p.prose = append(p.prose, "")
		case cur != nil:
			body = append(body, line)
			p.prose = append(p.prose, "")
		default:
			p.prose = append(p.prose, line)
		}
	}
	return p
}

var (
	inlineCode = regexp.MustCompile("`[^`]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	htmlAnchor = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// anchors returns the anchors of a page: GitHub's slugs of its headings
// (lower case, punctuation dropped, spaces as hyphens, -1, -2 ... for
// repeats) and its <a id> anchors.
func anchors(p mdPage) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range p.prose {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1")
		var slug strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				slug.WriteRune(r)
			case r == ' ':
				slug.WriteRune('-')
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// brokenLinks returns every relative link of the pages (paths relative to
// root) whose file or anchor does not exist, as "page:line: link: why".
func brokenLinks(t *testing.T, root string, pages []string) []string {
	t.Helper()
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := cache[path]; ok {
			return a
		}
		a := anchors(readPage(t, path))
		cache[path] = a
		return a
	}
	var bad []string
	for _, page := range pages {
		p := readPage(t, filepath.Join(root, page))
		for i, line := range p.prose {
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				link := m[1]
				if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(link, "#")
				target := filepath.Join(root, page)
				if file != "" {
					target = filepath.Join(root, filepath.Dir(page), file)
				}
				where := fmt.Sprintf("%s:%d: %s", page, i+1, link)
				if _, err := os.Stat(target); err != nil {
					bad = append(bad, where+": no such file")
					continue
				}
				if frag != "" && (!strings.HasSuffix(target, ".md") || !anchorsOf(target)[frag]) {
					bad = append(bad, where+": no such anchor")
				}
			}
		}
	}
	return bad
}

// TestDocLinks follows every relative link (file and #anchor) of the README
// and docs/, and checks docs/README.md indexes every page of docs/.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	pages := docPages(t, "../..")
	for _, bad := range brokenLinks(t, "../..", pages) {
		t.Error(bad)
	}
	index := strings.Join(readPage(t, "../../docs/README.md").prose, "\n")
	for _, page := range pages {
		if name, ok := strings.CutPrefix(page, "docs/"); ok && name != "README.md" && !strings.Contains(index, "]("+name+")") {
			t.Errorf("docs/README.md does not list %s", name)
		}
	}
	if n := len(pages); n < 15 {
		t.Errorf("%d pages checked: the glob missed docs/", n)
	}
}

// The checker finds what it is for: a missing file, a missing anchor; and
// passes what exists, links in code left alone.
func TestDocLinksCatch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/b.md", "# B\n\n## Exit codes: `0` to `4`\n\n## Exit codes: `0` to `4`\n\n<a id=\"x-y\"></a>\n")
	write("docs/a.md", "# A\n\n[ok](b.md#exit-codes-0-to-4) [ok](b.md#exit-codes-0-to-4-1) [ok](b.md#x-y) [ok](#a)\n"+
		"[ok](../README.md) [web](https://example.com/x#y) `[code](nowhere.md)`\n\n```\n[code](nowhere.md)\n```\n"+
		"[gone](c.md) [no anchor](b.md#exit-codes) [self](#b)\n")
	write("README.md", "[ok](docs/a.md#a)\n")
	got := brokenLinks(t, root, []string{"README.md", "docs/a.md"})
	want := []string{"docs/a.md:9: c.md: no such file", "docs/a.md:9: b.md#exit-codes: no such anchor", "docs/a.md:9: #b: no such anchor"}
	if !slices.Equal(got, want) {
		t.Errorf("broken links:\n got  %q\n want %q", got, want)
	}
}

// fragmentBase is the job a "yaml fragment" block is merged into.
const fragmentBase = `name: docs-fragment
api: {base_url: "https://api.example.com/api"}
seeds: {shortvideo: {profiles: [alice]}}
`

// seedSamples is a valid value of each seed list, for the seed files a
// job shown names (X_file keys).
var seedSamples = map[string]string{
	"profiles": "alice", "sec_uids": "MS4wLjABAAAAYWxpY2U", "keyword_searches": "street food",
	"hashtag_searches": "fitness", "top_searches": "cooking", "songs": "7012345678", "live": "alice",
	"posts": "https://www.photosocial.example/p/CODE/", "reels_searches": "surfing",
	"transcripts": "https://www.photosocial.example/reel/CODE/", "embeds": "natgeo", "highlights": "17891",
}

// merge lays src over dst, mappings key by key.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// writeSeedFiles writes, in dir, a file of one valid value for every
// X_file key under seeds (a CSV file with the column named when one is).
func writeSeedFiles(t *testing.T, dir string, doc map[string]any) {
	t.Helper()
	seeds, _ := doc["seeds"].(map[string]any)
	for _, platform := range seeds {
		lists, _ := platform.(map[string]any)
		for key, v := range lists {
			list, ok := strings.CutSuffix(key, "_file")
			if !ok {
				continue
			}
			path, content := "", seedSamples[list]+"\n"
			switch v := v.(type) {
			case string:
				path = v
			case map[string]any:
				path, _ = v["path"].(string)
				if col, ok := v["column"].(string); ok {
					content = col + "\n\"" + seedSamples[list] + "\"\n"
				}
			}
			if path == "" || seedSamples[list] == "" {
				t.Fatalf("%s: no path or no sample value", key)
			}
			full := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// loadShownJob loads a yaml block as a job file, through jobfile.Load; a
// "yaml fragment" block is first merged into fragmentBase.
func loadShownJob(t *testing.T, b mdBlock) error {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(b.text), &doc); err != nil {
		return err
	}
	text := []byte(b.text)
	switch b.info {
	case "yaml":
	case "yaml fragment":
		var base map[string]any
		if err := yaml.Unmarshal([]byte(fragmentBase), &base); err != nil {
			t.Fatal(err)
		}
		merge(base, doc)
		doc = base
		var err error
		if text, err = yaml.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("info string %q", b.info)
	}
	dir := t.TempDir()
	writeSeedFiles(t, dir, doc)
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := jobfile.Load(path)
	return err
}

// TestDocJobFiles loads every job file the docs show (```yaml blocks: whole
// job files; ```yaml fragment: a part, merged into a minimal job) and the
// example jobs, through jobfile.Load: every key exists, every value is
// valid.
func TestDocJobFiles(t *testing.T) {
	t.Parallel()
	n, fragments := 0, 0
	for _, page := range docPages(t, "../..") {
		for _, b := range readPage(t, filepath.Join("../..", page)).blocks {
			if !strings.HasPrefix(b.info, "yaml") {
				continue
			}
			n++
			if b.info == "yaml fragment" {
				fragments++
			}
			if err := loadShownJob(t, b); err != nil {
				t.Errorf("%s:%d: the job file shown does not load (a part of one is marked ```yaml fragment):\n%v", page, b.line, err)
			}
		}
	}
	for _, path := range []string{"../../jobs.example.yaml", "../../jobs.scrapecreators.example.yaml"} {
		if _, err := jobfile.Load(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	if n < 5 || fragments < 2 {
		t.Errorf("%d yaml blocks, %d fragments: the pages lost their job files?", n, fragments)
	}
	// The check fails a job that does not load, whole or fragment.
	for _, b := range []mdBlock{{info: "yaml", text: "name: x\nseeds: {shortvideo: {profiles: [a]}}\nlimits: {workerz: 2}\n"},
		{info: "yaml fragment", text: "limits: {workers: 0}\n"}, {info: "yaml", text: "api: {preset: scrapecreators}\n"}} {
		if loadShownJob(t, b) == nil {
			t.Errorf("%q loads", b.text)
		}
	}
}

// docCommand is a crawler command line a page shows.
type docCommand struct {
	where  string
	env    map[string]string // VAR=value words before it
	args   []string          // after the binary
	inline bool              // from `inline code` in prose, not a code block
}

var (
	// crawlerWord finds the binary as a command word (not a path segment
	// such as bin/crawler or /etc/crawler), up to a shell separator.
	crawlerWord = regexp.MustCompile(`(?:^|[\s;&|(])((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)(?:/usr/local/bin/)?crawler((?:[ \t]+[^\s;&|()'"#]+)*)`)
	shellBlock  = map[string]bool{"sh": true, "bash": true, "console": true, "shell": true, "cron": true}
)

// docCommands returns every crawler command line of the pages: lines of
// shell blocks (comments dropped) and inline code spans that start with
// "crawler ".
func docCommands(t *testing.T, root string, pages []string) []docCommand {
	t.Helper()
	var out []docCommand
	add := func(where, text string, inline bool) {
		for _, m := range crawlerWord.FindAllStringSubmatch(text, -1) {
			c := docCommand{where: where, env: map[string]string{}, args: strings.Fields(m[2]), inline: inline}
			for _, kv := range strings.Fields(m[1]) {
				k, v, _ := strings.Cut(kv, "=")
				c.env[k] = v
			}
			out = append(out, c)
		}
	}
	for _, page := range pages {
		p := readPage(t, filepath.Join(root, page))
		for _, b := range p.blocks {
			if !shellBlock[b.info] {
				continue
			}
			for i, line := range strings.Split(b.text, "\n") {
				if j := strings.Index(line, "#"); j == 0 || j > 0 && line[j-1] == ' ' {
					line = line[:j]
				}
				add(fmt.Sprintf("%s:%d", page, b.line+1+i), line, false)
			}
		}
		// Inline spans may wrap lines: join the prose of each paragraph.
		prose := strings.Join(p.prose, "\n")
		for _, span := range inlineCode.FindAllString(prose, -1) {
			span = strings.Join(strings.Fields(strings.Trim(span, "`")), " ")
			if strings.HasPrefix(span, "crawler ") {
				add(page, span, true)
			}
		}
	}
	return out
}

// placeholders stand for values in the command lines shown.
var placeholders = map[string]string{"ID": "42", "N": "10", "D": "30s", "AGE": "90d", "NAME": "nightly", "ADDR": "127.0.0.1:0"}

// concrete turns a command line shown into one to run: optional [groups]
// taken, the first of a|b alternatives, placeholders and shell variables
// given values, job files replaced by job, files to write put under dir,
// listen addresses on a free port.
func concrete(args []string, job, dir string) []string {
	var out []string
	for i, a := range args {
		a = strings.Trim(a, "[]")
		if !strings.HasPrefix(a, "-") {
			a, _, _ = strings.Cut(a, "|")
		}
		prev := ""
		if i > 0 {
			prev = strings.Trim(args[i-1], "[]")
		}
		switch v, ok := placeholders[a]; {
		case ok:
			a = v
		case strings.HasPrefix(a, "$"):
			a = "1"
		case a == "JOB" || a == "JOBFILE" || strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml"):
			a = job
		case prev == "--addr" || prev == "--metrics-addr":
			a = "127.0.0.1:0"
		case prev == "--html" || prev == "--metrics-textfile":
			a = filepath.Join(dir, filepath.Base(a))
		}
		out = append(out, a)
	}
	return out
}

// flagsOf returns the flag names a command's --help lists.
func flagsOf(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	r := invoke(t, nil, cmd, "--help")
	if r.code != exitOK {
		t.Fatalf("crawler %s --help: exit %d", cmd, r.code)
	}
	out := map[string]bool{"help": true}
	for _, m := range regexp.MustCompile(`(?m)^\s+-(\S+)`).FindAllStringSubmatch(r.stdout, -1) {
		out[m[1]] = true
	}
	return out
}

// checkCommand runs a command line shown, in-process, with a valid job file
// and no DATABASE_URL: one that needs the database must get past its flags,
// arguments and job file and stop exactly there; version and help exit 0;
// the sandbox starts and stops (its context already done). An inline
// mention without arguments names a command; one with flags must use flags
// the command has.
func checkCommand(t *testing.T, c docCommand, job string, flags func(string) map[string]bool) error {
	names := map[string]bool{}
	for _, cmd := range commands() {
		names[cmd.name] = true
	}
	if len(c.args) == 0 {
		return fmt.Errorf("no command")
	}
	cmd := c.args[0]
	switch {
	case cmd == "--version" || cmd == "--help" || cmd == "help":
		cmd = "version"
	case !names[cmd]:
		return fmt.Errorf("no command %q", cmd)
	}
	if c.inline {
		known := flags(cmd)
		for _, a := range c.args[1:] {
			name, _, _ := strings.Cut(strings.TrimLeft(strings.Trim(a, "[]"), "-"), "=")
			if strings.HasPrefix(strings.Trim(a, "[]"), "-") && !known[name] {
				return fmt.Errorf("crawler %s has no flag --%s", cmd, name)
			}
		}
		return nil
	}
	env := map[string]string{"CRAWLER_API_KEY": "k", "SANDBOX_API_KEY": "k"}
	for k, v := range c.env {
		env[k] = v
	}
	args := concrete(c.args, job, t.TempDir())
	if (cmd == "run" || cmd == "plan") && !slices.Contains(args, job) {
		args = append(args, job)
	}
	ctx := context.Background()
	if cmd == "sandbox" {
		if !slices.Contains(args, "--addr") {
			args = append(args, "--addr", "127.0.0.1:0") // not the default port, which another may hold
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		ctx = done
	}
	var out, errb bytes.Buffer
	code := runEnv(ctx, args, &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	switch cmd {
	case "version", "sandbox":
		if code != exitOK {
			return fmt.Errorf("crawler %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
	default:
		if code != exitUsage || !strings.Contains(errb.String(), "DATABASE_URL is not set") {
			return fmt.Errorf("crawler %s: exit %d, %q; want it to reach the database check", strings.Join(args, " "), code, errb.String())
		}
	}
	return nil
}

// TestDocCommands parses every crawler command line the README and docs/
// show with the CLI's own flag sets.
func TestDocCommands(t *testing.T) {
	t.Parallel()
	job := writeJob(t, "name: docs-check\napi: {base_url: https://api.example.com/api}\nseeds: {shortvideo: {profiles: [alice]}}\n")
	helps := map[string]map[string]bool{}
	flags := func(cmd string) map[string]bool {
		if helps[cmd] == nil {
			helps[cmd] = flagsOf(t, cmd)
		}
		return helps[cmd]
	}
	cmds := docCommands(t, "../..", docPages(t, "../.."))
	lines, inline := 0, 0
	for _, c := range cmds {
		if c.inline {
			inline++
		} else {
			lines++
		}
		if err := checkCommand(t, c, job, flags); err != nil {
			t.Errorf("%s: %v", c.where, err)
		}
	}
	if lines < 30 || inline < 30 {
		t.Errorf("%d command lines and %d inline commands found: the pages lost theirs?", lines, inline)
	}
	// The check fails a line the CLI refuses.
	for _, c := range []docCommand{
		{args: []string{"run", "--no-such-flag", "job.yaml"}},
		{args: []string{"run", "--resume", "ID", "--new-run", "job.yaml"}},
		{args: []string{"prune"}},
		{args: []string{"frobnicate"}},
		{args: []string{"status", "--jsn"}, inline: true},
		{args: []string{"sandbox", "--rate", "fast"}},
	} {
		if checkCommand(t, c, job, flags) == nil {
			t.Errorf("crawler %s passes", strings.Join(c.args, " "))
		}
	}
}
