# kiln: make build | install | test | bench | fuzz | demo | check | release | image
GO      ?= go
BIN     ?= bin/kiln
DIST    ?= dist
# The version is the tree's version file (cmd/kiln/internal/buildinfo/VERSION: the
# release, or the next one with -dev); the commit says which tree.
VERSION ?= $(shell cat cmd/kiln/internal/buildinfo/VERSION)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
# make install copies kiln into GOBIN (go env GOBIN, else GOPATH/bin), the
# directory go install uses.
GOBIN_DIR ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
# Static (no cgo, no libc), no file system paths, stripped, reproducible (-buildid=).
LDFLAGS := -s -w -buildid= -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GOBUILD := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
# make release builds one binary per platform.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
FUZZTIME ?= 10s
# make image: the container image, built from scratch with local files only
# (Dockerfile) by podman (or PODMAN=buildah), for IMAGE_ARCH, from the build
# context IMAGE_DIR. BUSYBOX is a static busybox of that architecture
# (Debian's busybox-static). Every timestamp in the image is the commit's
# time, so a commit gives one image digest.
IMAGE      ?= ghcr.io/kilnhq/kiln:$(or $(VERSION),dev)
PODMAN     ?= podman
BUSYBOX    ?= /bin/busybox
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
IMAGE_DIR  ?= build/image
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: install build test bench fuzz demo check clean release servers image image-root

build:
	$(GOBUILD) -o $(BIN) ./cmd/kiln

# test: go test's usual output (tools/testsummary reads -json), then every
# skipped test with its reason, how to run them, and the counts.
install: build
	@mkdir -p $(GOBIN_DIR) && cp $(BIN) $(GOBIN_DIR)/kiln.tmp && mv $(GOBIN_DIR)/kiln.tmp $(GOBIN_DIR)/kiln
	@echo "installed $(GOBIN_DIR)/kiln ($$($(GOBIN_DIR)/kiln version | head -1))"
	@case ":$$PATH:" in *":$(GOBIN_DIR):"*) ;; *) echo "$(GOBIN_DIR) is not on PATH: export PATH=\"$(GOBIN_DIR):\$$PATH\"";; esac

test:
	@bash -o pipefail -c '$(GO) test -json -timeout 30m ./... | $(GO) run ./tools/testsummary'

# kube-apiserver v1.37.2 and etcd for the conformance test (cached; ~15 min once).
servers:
	bash admit/conformance/build-servers.sh

bench: build
	bash bench/run.sh

fuzz:
	bash bench/fuzz.sh $(FUZZTIME)

# demo: the build says how far it is (a first build compiles ~2,000
# packages: minutes on a cold cache), then examples/demo.sh.
demo:
	@echo "building $(BIN) (a first build compiles the Kubernetes, Helm and kustomize packages kiln links: minutes on a cold cache)"
	@bash -o pipefail -c "$(GOBUILD) -v -o $(BIN) ./cmd/kiln 2>&1 | awk '{ n++; if (n % 50 == 0) printf \"  %d packages compiled\\n\", n } END { printf \"  %d packages compiled: built $(BIN)\\n\", n }'"
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

# image-root: the image's build context: kiln for linux/IMAGE_ARCH, busybox,
# users and plugin.yaml under IMAGE_DIR (tools/imageroot).
image-root:
	@rm -rf $(IMAGE_DIR)/linux_$(IMAGE_ARCH) $(IMAGE_DIR)/home
	GOOS=linux GOARCH=$(IMAGE_ARCH) $(GOBUILD) -o $(IMAGE_DIR)/linux_$(IMAGE_ARCH)/usr/local/bin/kiln ./cmd/kiln
	GOOS= GOARCH= $(GO) run ./tools/imageroot -arch $(IMAGE_ARCH) -busybox $(BUSYBOX) $(IMAGE_DIR)

image: image-root
	$(PODMAN) build --layers=false --platform linux/$(IMAGE_ARCH) --timestamp $(SOURCE_DATE_EPOCH) \
	  --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -f Dockerfile -t $(IMAGE) $(IMAGE_DIR)
	@$(PODMAN) image inspect --format '$(IMAGE): image id {{.Id}}, digest {{.Digest}}, {{.Size}} bytes' $(IMAGE)

clean:
	rm -rf bin $(DIST) build
