# syntax=docker/dockerfile:1
# d6a: build a static binary, run it as a non-root user.

# The toolchain go.mod names (toolchain go1.26.10): the standard library
# fixes `make vulncheck` counts on (docs/decisions.md).
FROM golang:1.26.10-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# Only the Go sources: local state (.data, owned by the database user) and
# .git stay out of the build.
COPY cmd ./cmd
COPY internal ./internal
COPY schemas ./schemas
COPY sql ./sql
ENV CGO_ENABLED=0
# The verifier page's WebAssembly is a build artifact the binary embeds (make wasm).
RUN GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false -ldflags="-s -w -buildid=" -o internal/httpapi/verificador/d6a.wasm ./cmd/d6a-wasm
RUN go build -trimpath -ldflags="-s -w" -o /out/d6a ./cmd/d6a

# debian-slim rather than distroless so the compose healthcheck can call
# /readyz with curl.
FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/d6a --create-home --shell /usr/sbin/nologin d6a
COPY --from=build /out/d6a /usr/local/bin/d6a
USER 10001:10001
WORKDIR /var/lib/d6a
ENV D6A_DATA_DIR=/var/lib/d6a
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=6 \
  CMD curl -fsS -o /dev/null http://localhost:8080/readyz || exit 1
ENTRYPOINT ["d6a"]
CMD ["serve"]
