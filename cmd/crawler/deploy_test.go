package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/jobfile"
	"go.yaml.in/yaml/v3"
)

// crawlerLine finds a crawler command line in a cron line or a systemd
// Exec line: the words after the binary, up to a shell separator or quote.
var crawlerLine = regexp.MustCompile(`(?:^|[\s=])(?:/usr/local/bin/)?crawler((?: [^;&|'"\s]+)+)`)

// deployCommands returns every crawler command line of the recipes in
// deploy/, as argument lists without the binary, by file.
func deployCommands(t *testing.T) map[string][][]string {
	t.Helper()
	out := map[string][][]string{}
	text := func(path string, keep func(line string) bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") || !keep(line) {
				continue
			}
			for _, m := range crawlerLine.FindAllStringSubmatch(line, -1) {
				out[path] = append(out[path], strings.Fields(m[1]))
			}
		}
	}
	text("../../deploy/cron/crawler.cron", func(string) bool { return true })
	text("../../deploy/systemd/crawler-nightly.service", func(l string) bool { return strings.HasPrefix(l, "Exec") })
	yamls, _ := filepath.Glob("../../deploy/kubernetes/*.yaml")
	for _, path := range yamls {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s: %v", path, err)
				}
				break
			}
			walkContainers(doc, func(c map[string]any) {
				var argv []string
				for _, key := range []string{"command", "args"} {
					for _, a := range asList(c[key]) {
						argv = append(argv, a.(string))
					}
				}
				if len(argv) == 0 || filepath.Base(argv[0]) != "crawler" {
					t.Errorf("%s: container %v does not run crawler: %q", path, c["name"], argv)
					return
				}
				out[path] = append(out[path], argv[1:])
			})
			checkConfigMapJobs(t, path, doc)
		}
		f.Close()
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// walkContainers calls f with every container and init container of doc.
func walkContainers(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "containers" || k == "initContainers" {
				for _, c := range asList(x) {
					f(c.(map[string]any))
				}
				continue
			}
			walkContainers(x, f)
		}
	case []any:
		for _, x := range v {
			walkContainers(x, f)
		}
	}
}

// checkConfigMapJobs parses the job files a ConfigMap carries.
func checkConfigMapJobs(t *testing.T, path string, doc map[string]any) {
	if doc["kind"] != "ConfigMap" {
		return
	}
	data, _ := doc["data"].(map[string]any)
	for name, v := range data {
		if _, err := jobfile.Parse(name, []byte(v.(string))); err != nil {
			t.Errorf("%s: ConfigMap job file %s: %v", path, name, err)
		}
	}
}

// Every crawler command line in deploy/ (cron line, systemd units,
// Kubernetes manifests) is accepted by the CLI: its subcommand exists and
// its flags parse with that command's flag set and values. Each runs
// in-process with a valid job file in place of its job path and no
// DATABASE_URL, so it gets past flag and job checks and stops exactly at
// the missing database.
func TestDeployRecipes(t *testing.T) {
	t.Parallel()
	job := writeJob(t, "name: deploy-check\napi: {base_url: https://api.example.com/api}\nseeds: {shortvideo: {profiles: [alice]}}\n")
	cmds := deployCommands(t)
	if len(cmds) != 4 {
		t.Errorf("recipes with crawler commands: %d, want 4 (cron, systemd, 2 kubernetes)", len(cmds))
	}
	n := 0
	for path, lines := range cmds {
		for _, argv := range lines {
			n++
			if len(argv) < 2 || (argv[0] != "run" && argv[0] != "plan") {
				t.Errorf("%s: %q: expected crawler run|plan ... JOBFILE", path, argv)
				continue
			}
			if !strings.HasPrefix(argv[len(argv)-1], "/etc/crawler/") {
				t.Errorf("%s: %q: the job file should be under /etc/crawler/", path, argv)
			}
			args := append(append([]string{}, argv[:len(argv)-1]...), job)
			res := invoke(t, map[string]string{"CRAWLER_API_KEY": "k"}, args...)
			if res.code != exitUsage || !strings.Contains(res.stderr, "DATABASE_URL is not set") {
				t.Errorf("%s: crawler %s: exit %d, %q; want it to reach the database check", path, strings.Join(argv, " "), res.code, res.stderr)
			}
		}
	}
	if n < 5 {
		t.Errorf("%d crawler command lines in deploy/, want at least 5", n)
	}
	// The test catches a rotten flag.
	if res := invoke(t, map[string]string{"CRAWLER_API_KEY": "k"}, "run", "--no-such-flag", job); strings.Contains(res.stderr, "DATABASE_URL is not set") {
		t.Error("an unknown flag got past the check")
	}
}
