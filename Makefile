# Tandem: `make run` serves on 127.0.0.1:8080 with embedded SQLite in ./tandem-data;
# `make test` runs every test; `make bench` prints the benchmark figures.
SWIFT ?= swift
DATA ?= ./tandem-data
PORT ?= 8080
ASYNC_SERVER_SUITES = '^TandemServerTests\.(CollaborationScenarioTests|ConversationTests|HighlightScenarioTests|JournalRestartTests|SessionProtocolTests|StreamTests)/'

SEEDS ?= 200
SEED_BASE ?= 1
STEPS ?= 40

.PHONY: bootstrap test-bootstrap build run test soak bench clean

bootstrap:
	@scripts/bootstrap

# Adds what only the tests need (headless Chromium for the landing-page browser test).
test-bootstrap:
	@scripts/bootstrap --test

build: bootstrap
	$(SWIFT) build -c release --product tandem

run: build
	.build/release/tandem serve --data $(DATA) --port $(PORT)

test: test-bootstrap
	$(SWIFT) build --build-tests
	@# Five processes: the HTTP layer's socket tests, its WebSocket tests, the SDK's suites, the
	@# server suites with async tests, and the rest. Sharing a process, a test server now and then
	@# lost its listening socket to another suite's descriptor handling (HTTP with server suites:
	@# about 1 run in 15; HTTP with WebSocket suites: 1 in 4 under load); apart, none (see the
	@# issue notes). Swift's global executor has one thread per core (two here), and most server
	@# suites are synchronous and block on each request: in one process they starved async tests
	@# for a minute at a time and their deadlines passed. So async suites run apart from them
	@# (ASYNC_SERVER_SUITES lists the server suites with async tests; add new ones there).
	@# scripts/test-process gives each process its own temporary folder and removes it afterwards;
	@# --retry-once reruns a failed process once, for the known open faults it names (the last
	@# process crashed once in CI inside libdispatch, under URLSession's socket sources).
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter TandemHTTPTests --skip WebSocket
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter WebSocket
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter '^TandemTests\.'
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter $(ASYNC_SERVER_SUITES)
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --skip TandemHTTPTests --skip '^TandemTests\.' --skip $(ASYNC_SERVER_SUITES)
	@# Every benchmark figure at tiny sizes, so a figure that no longer runs fails CI (its numbers mean nothing).
	.build/debug/tandem-bench --smoke

# The LocalStore convergence test (issue 15) for many seeds: SEEDS=N from SEED_BASE, STEPS
# random operations each (make test runs three seeds). A failure prints its seed and the run's log.
soak: test-bootstrap
	$(SWIFT) build --build-tests
	TANDEM_SEEDS=$(SEEDS) TANDEM_SEED_BASE=$(SEED_BASE) TANDEM_STEPS=$(STEPS) \
		$(SWIFT) test --skip-build --disable-xctest --filter LocalStoreConvergenceTests

bench: bootstrap
	$(SWIFT) build -c release
	.build/release/tandem-bench $(BENCH_ARGS)

clean:
	$(SWIFT) package clean
