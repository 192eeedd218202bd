# Tandem: `make run` serves on 127.0.0.1:8080 with embedded SQLite in ./tandem-data;
# `make test` runs every test; `make bench` prints the benchmark figures.
SWIFT ?= swift
DATA ?= ./tandem-data
PORT ?= 8080

.PHONY: bootstrap test-bootstrap build run test bench clean

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
	@# Two processes: the HTTP layer's socket tests run apart from the suites that spawn
	@# `tandem serve` processes. Together they rarely (about 1 run in 15) lost a test server's
	@# listening socket to another suite's descriptor handling; apart, none in 11 runs so far (see the issue notes).
	$(SWIFT) test --skip-build --disable-xctest --filter TandemHTTPTests
	$(SWIFT) test --skip-build --disable-xctest --skip TandemHTTPTests

bench: bootstrap
	$(SWIFT) build -c release
	.build/release/tandem-bench $(BENCH_ARGS)

clean:
	$(SWIFT) package clean
