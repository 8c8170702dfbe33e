# kiln: make build | test | bench | fuzz | demo | check | release
GO      ?= go
BIN     ?= bin/kiln
DIST    ?= dist
# The version is the nearest v* tag (v0.1.0, or v0.1.0-3-g4b96001 after it,
# with -dirty for local changes). Without a tag it stays empty and kiln falls
# back on the build info Go records (a pseudo-version and the commit).
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
# Static (no cgo, no libc), no file system paths, stripped, reproducible (-buildid=).
LDFLAGS := -s -w -buildid= -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GOBUILD := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
# make release builds one binary per platform.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
FUZZTIME ?= 10s

.PHONY: build test bench fuzz demo check clean release servers

build:
	$(GOBUILD) -o $(BIN) ./cmd/kiln

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

# release: $(DIST)/kiln_<os>_<arch>[.exe] for every platform and SHA256SUMS
# (sha256sum -c format). RELEASING.md says how they are published.
release:
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@echo "kiln $(or $(VERSION),(no tag)) commit $(COMMIT)"
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; out=$(DIST)/kiln_$${os}_$${arch}; \
	  if [ $$os = windows ]; then out=$$out.exe; fi; \
	  echo "  GOOS=$$os GOARCH=$$arch -> $$out"; \
	  GOOS=$$os GOARCH=$$arch $(GOBUILD) -o $$out ./cmd/kiln; \
	done
	@cd $(DIST) && sha256sum kiln_* > SHA256SUMS
	@cd $(DIST) && for f in kiln_*; do wc -c < $$f | awk -v f=$$f '{printf "%-24s %10d bytes %6.1f MB\n", f, $$1, $$1 / 1048576}'; done
	@cat $(DIST)/SHA256SUMS

clean:
	rm -rf bin $(DIST)
