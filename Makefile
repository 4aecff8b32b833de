# corral: `make demo` shows the sandbox at work, `make test` runs every suite.
GO       ?= go
BIN      := bin
CORRAL   := $(BIN)/corral

.PHONY: all build demo test test-root test-unprivileged test-nocgo vet cross bench clean

all: build

build:
	$(GO) build -o $(CORRAL) ./cmd/corral

demo: build
	@scripts/demo.sh $(CORRAL)

# Unit and integration tests as the current user, again built without cgo
# (no seccomp: the suite must skip what it cannot check), then (when root)
# again as an unprivileged user, plus vet and a macOS cross-build.
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

# Every suite on a build without the seccomp layer, as on a host that lacks
# one: tests that need a sandbox the host cannot give skip, naming why.
test-nocgo:
	CGO_ENABLED=0 $(GO) test -count=1 ./...

bench: build
	@scripts/bench.sh

clean:
	rm -rf $(BIN)
