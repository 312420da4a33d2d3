# socialcrawl crawler. `make help` lists the targets.

GO ?= go
BIN := bin
BENCHTIME ?= 2s

.DEFAULT_GOAL := help
.PHONY: help test vet fmt-check ensure-postgres ensure-pgbouncer ensure-chromium ensure-scrapy build demo bench schema-doc

help: ## List targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# test builds the crawler once for the packages that run it as a child process (testkit/childproc.EnvCrawlerBin)
# and migrates one template database for every package of pgtest.MainMigrated (pgtest.EnvMigratedTemplate);
# go test vets each package it builds with every analyzer (-vet=all: what `make vet` runs, test files and
# packages without tests included), from the export data of the -race build it makes anyway: a separate
# go vet first compiled every package a second time and ran alone, 57 CPU-s and 30 s on a fresh clone.
# go test starts the packages' test binaries in the order listed (two at a time on two cores): the longest
# go first, so that none of them is left running alone at the end (./... adds every other package once).
# Most tests wait on answer times, leases and child processes more than they compute: -parallel 4 lets
# four of a package's parallel tests run at once (the default, GOMAXPROCS, is two on two cores).
TEST_FIRST := ./pipeline ./cmd/crawler ./testkit/bench ./testkit/sim ./sources ./sources/concurrency ./retention ./jobfile
test: ensure-postgres ensure-pgbouncer ensure-chromium fmt-check ## Vet, check formatting, run all tests with -race on one throwaway PostgreSQL
	$(GO) build -o $(BIN)/crawler-test ./cmd/crawler
	CRAWLER_TEST_BIN=$(CURDIR)/$(BIN)/crawler-test $(GO) run ./tools/withpg -migrated-template -- $(GO) test -race -count=1 -vet=all -parallel 4 -timeout 20m $(TEST_FIRST) ./...

vet: ## go vet ./...
	$(GO) vet ./...

fmt-check: ## Fail, listing the files, if any Go file is not gofmt-ed
	@files=$$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -not -path './vendor/*' -print0 | xargs -0 -r gofmt -l); \
	if [ -n "$$files" ]; then echo "gofmt needed on:"; echo "$$files"; exit 1; fi

ensure-postgres: ## Install the PostgreSQL server binaries if missing (apt-get, as root)
	@scripts/ensure-postgres.sh

ensure-pgbouncer: ## Install PgBouncer for the transaction-pooling test if missing (apt-get, as root)
	@scripts/ensure-pgbouncer.sh

ensure-chromium: ## Install Debian's chromium for the report's browser test if missing (apt-get, as root)
	@scripts/ensure-chromium.sh

ensure-scrapy: ## Install Debian's python3-scrapy for the benchmark's peer workload if missing (apt-get, as root)
	@scripts/ensure-scrapy.sh

build: ## Build bin/crawler from ./cmd/crawler
	$(GO) build -buildvcs=true -o $(BIN)/crawler ./cmd/crawler

schema-doc: ensure-postgres ## Regenerate docs/schema.md (the data dictionary) from a freshly migrated throwaway database
	$(GO) run ./tools/withpg -- $(GO) run ./tools/schemadoc -out docs/schema.md

demo: ## Run the demo (scripts/demo.sh); make demo PRESET=scrapecreators runs it in the real service's dialect
	@PRESET=$(PRESET) scripts/demo.sh

bench: ensure-postgres ensure-scrapy ## Benchmarks against the sandbox and a throwaway PostgreSQL (~30 min); writes BENCHMARKS.md
	$(GO) run ./tools/bench -v -out BENCHMARKS.md -benchtime $(BENCHTIME)

.PHONY: simulate
simulate: ensure-postgres ## Simulate combined nights on SEEDS seeds (default 100; START, PROFILE, PARALLEL): docs/simulator.md
	$(GO) build -o $(BIN)/simulate ./tools/simulate
	$(GO) run ./tools/withpg -- $(BIN)/simulate -seeds $(or $(SEEDS),100) -start $(or $(START),1) -profile $(or $(PROFILE),full) -parallel $(or $(PARALLEL),2)
