# kiln's container image: the static kiln binary on a minimal root file
# system whose only other program is Debian's statically linked busybox,
# providing the shell and the few tools the Argo CD plugin's discover command
# runs (e2e/argocd_test.go builds the same root file system from the same
# Debian package and runs discover and generate in it).
#
#   docker build -t ghcr.io/kilnhq/kiln:v0.1.0 --build-arg VERSION=v0.1.0 .
#
# /etc/passwd names argocd (999, Argo CD's sidecar user) and nobody, whom
# kustomize runs container functions as (docker run --user nobody).
#
# One image, three uses:
#   kustomize KRM function (container form):  runs the default command, kiln fn
#   Argo CD CMP sidecar:                      command: [/var/run/argocd/argocd-cmp-server]
#   anything else:                            docker run --rm -v "$PWD:/src" -w /src IMAGE lint .

# Build kiln as make release does: no cgo, no libc, trimmed paths, stripped.
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=
ARG COMMIT=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -buildid= -X main.version=$VERSION -X main.commit=$COMMIT" \
      -o /out/kiln ./cmd/kiln

# The tools: busybox-static from Debian, linked as just the applets in APPLETS.
FROM debian:bookworm-slim AS tools
# APPLETS: sh, find, grep, xargs, head are what plugin.yaml's discover runs;
# cat and ls are for a person looking inside the container.
ARG APPLETS="sh find grep xargs head cat ls"
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static \
 && mkdir -p /rootfs/bin /rootfs/usr/local/bin /rootfs/tmp /rootfs/home/argocd/cmp-server/config \
 && cp /bin/busybox /rootfs/bin/busybox \
 && for a in $APPLETS; do ln -s busybox /rootfs/bin/$a; done \
 && chmod 1777 /rootfs/tmp \
 && mkdir -p /rootfs/etc \
 && printf 'root:x:0:0:root:/root:/bin/sh\nargocd:x:999:999:argocd:/home/argocd:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' > /rootfs/etc/passwd \
 && printf 'root:x:0:\nargocd:x:999:\nnogroup:x:65534:\n' > /rootfs/etc/group \
 && chown -R 999:999 /rootfs/home/argocd

FROM scratch
COPY --from=tools /rootfs/ /
COPY --from=build /out/kiln /usr/local/bin/kiln
# The CMP server reads its plugin here; repo-server-patch.yaml may mount the
# ConfigMap over it.
COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
ENV PATH=/usr/local/bin:/bin HOME=/home/argocd
# Argo CD runs plugin sidecars as uid 999 (the argocd user); so does everything else here.
USER 999:999
WORKDIR /home/argocd
ENTRYPOINT ["/usr/local/bin/kiln"]
CMD ["fn"]
