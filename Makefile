# corral: `make demo` shows the sandbox at work, `make test` runs every suite.
GO       ?= go
BIN      := bin
CORRAL   := $(BIN)/corral

.PHONY: all build demo test test-root test-unprivileged test-nocgo vet cross bench clean

all: build

# The binary is pure Go: the seccomp filters come generated ahead (see
# seccomp/doc.go), and a process without libc starts faster, which every
# sandbox's init and every `corral run` pays.
build:
	CGO_ENABLED=0 $(GO) build -o $(CORRAL) ./cmd/corral

demo: build
	@scripts/demo.sh $(CORRAL)

# Unit and integration tests as the current user with cgo (libseccomp
# checks the generated filters), again built without cgo as `make build`
# ships, then (when root) again as an unprivileged user, plus vet and a
# macOS cross-build.
test: vet cross test-root test-nocgo test-unprivileged

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

cross:
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...

test-root:
	$(GO) test -count=1 ./...

test-unprivileged:
	@scripts/test-unprivileged.sh

# Every suite built as the shipped binary is: pure Go, seccomp from the
# generated programs.
test-nocgo:
	CGO_ENABLED=0 $(GO) test -count=1 ./...

bench: build
	@scripts/bench.sh
	@scripts/bench-git.sh

clean:
	rm -rf $(BIN)
