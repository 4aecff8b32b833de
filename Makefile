# corral: `make demo` shows the sandbox at work, `make test` runs every suite.
GO       ?= go
BIN      := bin
CORRAL   := $(BIN)/corral

.PHONY: all build demo deps test test-root test-unprivileged test-nocgo test-userbuild vet cross bench cover fuzz soak clean

all: build

# The binary is pure Go: the seccomp filters come generated ahead (see
# seccomp/doc.go), and a process without libc starts faster, which every
# sandbox's init and every `corral run` pays.
# corral-init beside corral is the small binary its sandboxes run their
# init from (see cmd/corral-init); corral-mcp beside it is the MCP server
# `corral mcp` runs (see cmd/corral-mcp), kept out of corral so that its
# SDK does not slow every command's start-up.
build:
	CGO_ENABLED=0 $(GO) build -o $(CORRAL) ./cmd/corral
	CGO_ENABLED=0 $(GO) build -o $(BIN)/corral-init ./cmd/corral-init
	CGO_ENABLED=0 $(GO) build -o $(BIN)/corral-mcp ./cmd/corral-mcp

demo: build
	@scripts/demo.sh $(CORRAL)

# Installs what the tests need when run as root (scripts/deps.sh; as
# another user it names the missing packages and the command). Then unit
# and integration tests as the current user with cgo and the libseccomp tag
# (libseccomp checks the generated filters), again built without cgo as
# `make build` ships, a library user's cgo build without libseccomp, then
# (when root) again as an unprivileged user, plus vet and a macOS
# cross-build.
test: deps vet cross test-root test-nocgo test-userbuild test-unprivileged

deps:
	@scripts/deps.sh test

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags libseccomp ./...

cross:
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...

test-root:
	$(GO) test -tags libseccomp -count=1 ./...

test-unprivileged:
	@scripts/test-unprivileged.sh

# Every suite built as the shipped binary is: pure Go, seccomp from the
# generated programs.
test-nocgo:
	CGO_ENABLED=0 $(GO) test -count=1 ./...

test-userbuild:
	@scripts/userbuild.sh

# Coverage of each package by the whole suite, the re-executed sandbox
# processes (spawner, init) included: each test binary's coverage
# directory is kept (-work under COVERDIR) and merged. The profile is left
# in $(COVERDIR)/cover.out for `go tool cover -html`.
COVERDIR ?= $(or $(TMPDIR),/tmp)/corral-cover
cover:
	rm -rf $(COVERDIR) && mkdir -p $(COVERDIR)/work
	GOTMPDIR=$(COVERDIR)/work $(GO) test -work -count=1 -cover -coverpkg=./... ./...
	@dirs=$$(find $(COVERDIR)/work -type d -name gocoverdir | paste -sd, -); \
	$(GO) tool covdata textfmt -i=$$dirs -o $(COVERDIR)/cover.out && \
	echo "coverage by the whole suite, re-executed children included:" && \
	$(GO) tool covdata percent -i=$$dirs
	rm -rf $(COVERDIR)/work

# Every native fuzz target (`func FuzzX` in a _test.go file) for FUZZTIME
# each, one after another (scripts/fuzz.sh). `make test` runs each one's
# seed corpus only, as every `go test` does: the f.Add seeds and the
# files under the package's testdata/fuzz/FuzzX, crashers found before
# among them. scripts/fuzz-corpus.sh remakes the seeds made from real
# files (git's indexes and configs, curl's requests, an MCP session).
FUZZTIME ?= 30s
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# SOAK_N commands (default 1000) back to back and 8 at a time, from the
# library and the CLI, on the full and the landlock rung, then one line
# per check that nothing is left over (internal/soak, behind the soak
# build tag: not part of `make test`).
SOAK_N ?= 1000
soak:
	$(GO) test -c -tags soak -o $(or $(TMPDIR),/tmp)/corral-soak.test ./internal/soak
	cd $(or $(TMPDIR),/tmp) && SOAK_N=$(SOAK_N) nice -n 19 ./corral-soak.test -test.run '^TestSoak$$' -test.v -test.timeout 2h

bench: build
	CGO_ENABLED=0 $(GO) build -o $(BIN)/heavy-caller ./internal/bench/heavycaller
	@scripts/deps.sh test bench
	@scripts/bench.sh $(CORRAL) $(BIN)/heavy-caller
	@scripts/bench-git.sh
	@scripts/bench-work.sh $(CORRAL)
	@scripts/bench-egress.sh
	@scripts/bench-srt.sh
	@scripts/bench-report.sh

clean:
	rm -rf $(BIN)
