# baton: `make demo` shows it working, `make test` checks everything. See README.md.
SHELL := /bin/bash
GO ?= go
# Every build and test is path-free (-trimpath): the build cache's entries do not name the
# checkout's folder, so a fresh clone reuses what an earlier checkout of the same code built
# (`make check` on a fresh clone stays under two minutes on a warm machine). The dev server's module
# keeps its own builds (GOFLAGS= below): its first build takes ten minutes.
export GOFLAGS := $(strip $(GOFLAGS) -trimpath)
GOBIN := $(shell $(GO) env GOPATH)/bin
WORKFLOWCHECK := $(GOBIN)/workflowcheck
WORKFLOWCHECK_VERSION := v0.6.0
DEVSERVER_SRC := $(wildcard tools/devserver/*.go) tools/devserver/go.mod tools/devserver/go.sum
TEST_TIMEOUT ?= 30m

.PHONY: all build check test vet workflowcheck fuzz bench chaos demo up clean FORCE

all: build

build: bin/baton bin/baton-worker bin/temporal-dev

# Go's build cache makes these cheap; always asking go keeps them from going stale.
bin/baton: FORCE
	$(GO) build -o $@ ./starter

bin/baton-worker: FORCE
	$(GO) build -o $@ ./worker

# The Temporal server is a separate module; its first build takes about 10 minutes.
bin/temporal-dev: $(DEVSERVER_SRC)
	@echo "building the Temporal dev server (first time: ~10 min)"
	cd tools/devserver && GOFLAGS= $(GO) build -o ../../bin/temporal-dev .

$(WORKFLOWCHECK):
	$(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)

vet:
	$(GO) vet ./...
	cd tools/devserver && GOFLAGS= $(GO) vet ./...

workflowcheck: $(WORKFLOWCHECK)
	$(WORKFLOWCHECK) -show-pos ./workflows/...

# The fast loop (under two minutes on a warm cache): vet, workflowcheck and every test that needs
# no Temporal server and no PostgreSQL (-short skips those; `make test` runs everything).
check: vet workflowcheck
	$(GO) test -short -count=1 -parallel 8 ./...   # the clock tests mostly wait: more of them side by side

# The store suite runs against SQLite and a real PostgreSQL that scripts/test-postgres.sh
# provides (installing and starting it on 127.0.0.1 when needed).
# Last, a short chaos run (every fault once): it restarts PostgreSQL, so nothing else may use it then.
test: build vet workflowcheck
	cd tools/devserver && BATON_TEST_POSTGRES="$$(../../scripts/test-postgres.sh)" GOFLAGS= $(GO) test -count=1 ./...
	BATON_TEST_POSTGRES="$$(scripts/test-postgres.sh)" $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) fuzz
	$(MAKE) chaos CHAOS_DURATION=2m CHAOS_RATE=10 CHAOS_OUTAGE=15s CHAOS_JSON=

# Each fuzz target for FUZZTIME (a count: a duration can end a run mid-minimisation with a
# spurious 'context deadline exceeded'; minimising a new input may take up to 5 s instead of the
# default 60 s); `make fuzz FUZZTIME=2000000x` digs deeper.
FUZZTIME ?= 200000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./policy
	$(GO) test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./config
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeChat$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./serve

# Speed and memory goals live in benchmarks: policy's decision pass (< 5 µs), classification of a
# 429 body (< 20 µs), record-outcome transactions (≥ 2,000/s uncontended on SQLite), adapter
# overhead per streamed chunk (< 5 µs). Figures and what limits them: BENCHMARKS.md.
# Then `baton bench` measures the whole thing against its goals on the dev server (a few
# minutes): the table on the terminal, the figures in bench/results.json; it fails when a figure
# misses its goal.
bench: build
	BATON_TEST_POSTGRES="$$(scripts/test-postgres.sh)" $(GO) test -run '^$$' -bench . -benchmem ./policy/... ./store/... ./provider/...
	@mkdir -p bench
	./bin/baton bench --json > bench/results.json
	./bin/baton bench --postgres "$$(scripts/test-postgres.sh)" --json > bench/results-postgres.json

# baton as a cluster under load while things break (chaos/, README "Running on a real cluster"):
# two Temporal nodes on PostgreSQL, two workers, two `baton serve`, the store on PostgreSQL; the
# table on the terminal, the figures in bench/chaos.json; it fails when a promise breaks.
CHAOS_DURATION ?= 5m
CHAOS_RATE ?= 20
CHAOS_OUTAGE ?= 30s
CHAOS_JSON ?= bench/chaos.json
chaos: build
	./bin/baton chaos --postgres "$$(scripts/test-postgres.sh)" --postgres-restart "scripts/test-postgres.sh restart" \
		--duration $(CHAOS_DURATION) --rate $(CHAOS_RATE) --outage $(CHAOS_OUTAGE) $(if $(CHAOS_JSON),--json $(CHAOS_JSON))

demo: build
	./scripts/demo.sh

up: build
	./scripts/up.sh

# Build outputs only: .baton/ holds the default store, with the user's keys, and is never removed.
clean:
	rm -rf bin

FORCE:
