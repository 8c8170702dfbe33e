# kiln: make build | test | bench | fuzz | demo | check
GO      ?= go
BIN     ?= bin/kiln
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
FUZZTIME ?= 10s

.PHONY: build test bench fuzz demo check clean servers

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kiln

test:
	$(GO) test -timeout 30m ./...

# kube-apiserver v1.37.2 and etcd for the conformance test (cached; ~15 min once).
servers:
	bash conformance/build-servers.sh

bench: build
	bash bench/run.sh

fuzz:
	bash bench/fuzz.sh $(FUZZTIME)

demo: build
	bash examples/demo.sh $(BIN)

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin
