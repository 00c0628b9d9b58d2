# syntax=docker/dockerfile:1
# One image for the router (serve), the event relay sidecar (relay) and the
# model-server simulator (sim): the entrypoint is the warmroute binary.
# Release builds name their version (printed by `warmroute version` and exported
# as warmroute_build_info):
#   docker build --build-arg VERSION=v1.2.0 --build-arg REVISION=$(git rev-parse HEAD) .

# Base images, fully qualified. Pin them by digest for a reproducible build
# (no digest is written here: none could be verified against a registry),
# e.g. --build-arg BUILD_IMAGE=docker.io/library/golang:1.27-bookworm@sha256:...
ARG BUILD_IMAGE=docker.io/library/golang:1.27-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${BUILD_IMAGE} AS build
# The module needs Go 1.27; pin the exact toolchain the project tests with.
ENV GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOFLAGS=-trimpath
WORKDIR /src
ARG VERSION=""
ARG REVISION=""
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags="-s -w -X github.com/warmroute/warmroute/buildinfo.version=${VERSION} -X github.com/warmroute/warmroute/buildinfo.revision=${REVISION}" \
      -o /out/warmroute ./cmd/warmroute

# Static binary on distroless: no shell, no package manager, uid 65532.
FROM ${RUNTIME_IMAGE}
COPY --from=build /out/warmroute /usr/local/bin/warmroute
USER 65532:65532
# 9002 ext_proc gRPC, 9090 admin HTTP (metrics, health).
EXPOSE 9002 9090
ENTRYPOINT ["/usr/local/bin/warmroute"]
CMD ["serve"]
