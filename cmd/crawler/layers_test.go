package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// layers orders the product's packages (docs/architecture.md): a package
// imports only packages of lower layers. The sandbox's packages sit in the
// layers their imports allow (api, world, contract and faults, real, the
// sandbox), beside the crawler's, which none of them imports. The harness
// (testkit/, tools/) sits above them all, and nothing the binary ships
// imports it.
var layers = [][]string{
	{"internal/version", "internal/jsontext", "revisit", "internal/yamlstrict", "internal/db", "internal/loop", "sources/ratecontrol", "sources/concurrency", "migrations",
		"internal/sandbox/api"},
	{"sources", "sinks", "internal/valuefile", "internal/sandbox/world"},
	{"sources/endpoints", "internal/sandbox/contract", "internal/sandbox/faults"},
	{"kinds", "internal/sandbox/real"},
	{"jobfile", "internal/sandbox"},
	{"runs", "retention", "pipeline/frontier", "pipeline/budget", "pipeline/quota"},
	{"pipeline/adaptive"},
	{"pipeline"},
	// Layer 8: plan, and what a run puts out (output/), one package a line.
	{"plan",
		"output/live",
		"output/metrics",
		"output/report",
		"output/events",
		"output/export",
	},
	{"cmd/crawler"},
}

const module = "github.com/socialcrawl/crawler/"

// TestLayers fails on an import of a package of the same or a higher
// layer, on a product package missing from the table, on a sandbox
// package importing one of the crawler's, and on a harness package in the
// binary's dependencies.
func TestLayers(t *testing.T) {
	t.Parallel()
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		if strings.HasPrefix(pkg, "testkit/") || strings.HasPrefix(pkg, "tools/") {
			continue
		}
		from, ok := layerOf[pkg]
		if !ok {
			t.Errorf("package %s has no layer in layers_test.go (and docs/architecture.md)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if to, ok := layerOf[dep]; !ok || to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d, or harness)", pkg, from, dep, to)
			}
			if isSandbox(pkg) && !isSandbox(dep) {
				t.Errorf("%s imports %s: the sandbox shares no code with the crawler", pkg, dep)
			}
		}
	}
	deps, err := exec.Command("go", "list", "-deps", module+"cmd/crawler").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, d := range strings.Fields(string(deps)) {
		if strings.HasPrefix(d, module+"testkit/") || strings.HasPrefix(d, module+"tools/") {
			t.Errorf("the binary depends on harness package %s", d)
		}
	}
}

func isSandbox(pkg string) bool {
	return pkg == "internal/sandbox" || strings.HasPrefix(pkg, "internal/sandbox/")
}
