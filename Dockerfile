# kiln's container image: the static kiln and Debian's static busybox on an
# otherwise empty root file system. It is built from scratch with local
# files only (no base image to pull, no network): `make image` assembles the
# build context under build/image (tools/imageroot: kiln built as make
# build builds it, busybox linked as the applets the Argo CD plugin's
# discover command runs, /etc/passwd, plugin.yaml) and builds this file with
# podman, reproducibly (the commit's time as every timestamp):
#
#   make image                                   # ghcr.io/kilnhq/kiln:<git describe>
#   make image IMAGE=localhost/kiln:dev PODMAN='buildah'
#
# One image, three uses (cmd/kiln/e2e/image_test.go runs each under a container runtime):
#   kustomize KRM function (container form):  runs the default command, kiln fn
#   Argo CD CMP sidecar:                      command: [/var/run/argocd/argocd-cmp-server]
#   anything else:                            podman run --rm -v "$PWD:/src:ro" -w /src IMAGE lint .
FROM scratch
# Set by the builder from --platform (make image: IMAGE_ARCH).
ARG TARGETARCH=amd64
ARG VERSION=
ARG COMMIT=
LABEL org.opencontainers.image.title=kiln \
      org.opencontainers.image.source=https://github.com/kilnhq/kiln \
      org.opencontainers.image.version=$VERSION \
      org.opencontainers.image.revision=$COMMIT
COPY linux_${TARGETARCH}/ /
# HOME and the CMP server's configuration belong to argocd (999), as in Argo CD's own image.
COPY --chown=999:999 home/argocd/ /home/argocd/
ENV PATH=/usr/local/bin:/bin HOME=/home/argocd
# Argo CD runs plugin sidecars as uid 999 (the argocd user); so does everything else here.
USER 999:999
WORKDIR /home/argocd
ENTRYPOINT ["/usr/local/bin/kiln"]
CMD ["fn"]
