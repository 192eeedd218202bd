# Tandem: `make run` serves on 127.0.0.1:8080 with embedded SQLite in ./tandem-data
# (`make run PORT=9090 DATA=/srv/tandem` for others); `make test` runs every test, the README's
# walk-through included; `make bench` prints the benchmark figures; `make deb` builds the
# Debian package in .build/deb/ (CONFIG=debug packages the debug build instead of a release one).
SWIFT ?= swift
DATA ?= ./tandem-data
PORT ?= 8080
# The server suites with async tests, found in their sources (scripts/async-server-suites, E21).
ASYNC_SERVER_SUITES := $(shell scripts/async-server-suites)

# The server suites run again against PostgreSQL (TANDEM_TEST_STORE=postgres: every test server and
# admin command gets --store with a database of a throwaway cluster; decision P38): every one of
# them, async ones apart, as above. Suites about SQLite itself skip there by their own trait
# (.sqliteOnly, with its reason). The four suites once skipped here (their HTML forms answered a
# lost SERIALIZABLE race 503) run since the per-node writer gate (P48) made those races wait (P61).

SEEDS ?= 200
SEED_BASE ?= 1
STEPS ?= 40
CONFIG ?= release

.PHONY: bootstrap test-bootstrap build run test soak bench deb clean

bootstrap:
	@scripts/bootstrap

# Adds what only the tests need (headless Chromium for the landing-page browser test).
test-bootstrap:
	@scripts/bootstrap --test

build: bootstrap
	@echo "building tandem (release; the first build compiles every module and takes several minutes, see README)"
	$(SWIFT) build -c release --product tandem

run: build
	.build/release/tandem serve --data $(DATA) --port $(PORT)

test: test-bootstrap
	$(SWIFT) build --build-tests
	@# Four processes: the HTTP layer's tests (its WebSocket tests included), the SDK's suites, the
	@# server suites with async tests, and the rest. Swift's global executor has one thread per core
	@# (two here), and most server suites (and many HTTP tests) are synchronous and block on each
	@# request: in one process they starve async tests for a minute at a time and their deadlines
	@# pass (one `swift test` of everything: 7 of 823 tests failed that way, decision E8). So async
	@# suites run apart from synchronous ones (ASYNC_SERVER_SUITES lists the server suites with async
	@# tests, derived from the sources). The "lost listening socket" that once split the HTTP tests in two
	@# was a test's race, fixed (E4).
	@# scripts/test-process gives each process its own temporary folder and removes it afterwards;
	@# --retry-once reruns a failed process once, for the known open faults it names (the last
	@# process crashed once in CI inside libdispatch, under URLSession's socket sources).
	@# TandemPostgresTests (synchronous, blocking libpq calls) run in the last process; each process
	@# that uses PostgreSQL starts its own throwaway cluster (PostgresCluster, decision P15).
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter '^TandemHTTPTests\.'
	@# The SDK's suites in two processes, LocalStore's apart: together they held about 1,550
	@# descriptors at once, and Foundation's Process.run crashes past about 1,360 (it reads each
	@# /proc/self/fd entry's name as 256 bytes; the last entry of a full 32 KiB listing buffer
	@# can reach an unmapped page: stop 34's CI, twice; decision E23). Apart: 870 and 730 at most.
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter '^TandemTests\.LocalStore'
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter '^TandemTests\.' --skip '^TandemTests\.LocalStore'
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter $(ASYNC_SERVER_SUITES)
	SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --skip '^TandemHTTPTests\.' --skip '^TandemTests\.' --skip $(ASYNC_SERVER_SUITES)
	@# The server suites again on PostgreSQL (P38); suites about SQLite itself skip there (.sqliteOnly).
	TANDEM_TEST_STORE=postgres SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter $(ASYNC_SERVER_SUITES)
	TANDEM_TEST_STORE=postgres SWIFT=$(SWIFT) scripts/test-process --retry-once --skip-build --disable-xctest --filter '^TandemServerTests\.' --skip $(ASYNC_SERVER_SUITES)
	@# Every benchmark figure at tiny sizes, so a figure that no longer runs fails CI (its numbers mean nothing).
	.build/debug/tandem-bench --smoke
	@# The Debian package of the debug build: installed with dpkg -i, served as the tandem user,
	@# removed and purged (scripts/test-deb; needs root, through sudo otherwise; decision F27).
	$(MAKE) deb CONFIG=debug
	@# The debug package has a folder of its own: a release package of the same commit stays (F45).
	@case "$$(readlink .build/deb/tandem-debug.deb)" in debug/*) ;; *) echo "make-deb: the debug package is not in .build/deb/debug/ (F45)"; exit 1;; esac
	@if [ -e .build/deb/tandem-release.deb ] && [ .build/deb/tandem-release.deb -ef .build/deb/tandem-debug.deb ]; then echo "make-deb: the debug package replaced the release one (F45)"; exit 1; fi
	scripts/test-deb .build/deb/tandem-debug.deb
	@# The README's shell blocks, pasted in order against a fresh server, must print what the README
	@# shows (issue 22, decision F3): a README change that breaks the walk-through fails here. First
	@# the checker itself must fail a wrong line, a silent failure and a hang (F41).
	scripts/test-readme-walkthrough .build/debug
	scripts/readme-walkthrough --bin .build/debug

# The LocalStore convergence test (issue 15) for many seeds: SEEDS=N from SEED_BASE, STEPS
# random operations each (make test runs three seeds). A failure prints its seed and the run's log.
soak: test-bootstrap
	$(SWIFT) build --build-tests
	TANDEM_SEEDS=$(SEEDS) TANDEM_SEED_BASE=$(SEED_BASE) TANDEM_STEPS=$(STEPS) \
		$(SWIFT) test --skip-build --disable-xctest --filter LocalStoreConvergenceTests

bench: bootstrap
	$(SWIFT) build -c release
	.build/release/tandem-bench $(BENCH_ARGS)

# The Debian package (dpkg-deb): /usr/bin/tandem, the Swift runtime in /usr/lib/tandem, a systemd
# unit, /etc/tandem/tandem.json, the tandem user (decisions F20–F29).
deb:
	@scripts/bootstrap --deb
	$(SWIFT) build -c $(CONFIG) --product tandem
	SWIFT=$(SWIFT) scripts/make-deb $(CONFIG)

clean:
	$(SWIFT) package clean
