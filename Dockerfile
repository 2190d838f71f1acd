# syntax=docker/dockerfile:1
# The Quartermaster image: both binaries (quartermaster, quartermaster-agent; and quartermaster-load,
# the load generator, as ./cmd/... builds it) on a small glibc base, run as an unprivileged user. Build a release with
#   docker build --build-arg VERSION=v1.2.0 --build-arg COMMIT=$(git rev-parse HEAD) -t quartermaster:v1.2.0 .
# The service needs a policy (QM_POLICY) and a database (QM_DATABASE_URL); see docs/operations.md.

ARG GO_VERSION=1.26

# --- build: every command under cmd/, with cgo (the node agent loads NVML through it) --------------
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=unknown
ENV CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations"
RUN mkdir -p /out /state && go build -ldflags "-s -w -X github.com/acme/quartermaster/internal/buildinfo.version=${VERSION} -X github.com/acme/quartermaster/internal/buildinfo.commit=${COMMIT}" -o /out/ ./cmd/...

# --- run: glibc, CA certificates and time zones (the policy's timezone), no shell, user 65532 -------
FROM gcr.io/distroless/base-debian12:nonroot AS run
COPY --from=build /out/ /usr/local/bin/
# The default SQLite file's directory, writable by the service; mount a volume there to keep it.
COPY --from=build --chown=65532:65532 /state /var/lib/quartermaster
ENV QM_DATA_DIR=/var/lib/quartermaster QM_HTTP_ADDR=:8080
WORKDIR /var/lib/quartermaster
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/quartermaster"]
CMD ["serve"]
