# baton's binaries for docker-compose.yml: the worker (the image's entrypoint) and the CLI (serve,
# health probes, every command), the same two `make build` makes. The Temporal server runs from
# its own image.
ARG GO_VERSION=1.26.8
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO off: SQLite is pure Go (modernc.org/sqlite), so the binaries run on a distroless base.
RUN CGO_ENABLED=0 go build -trimpath -o /out/baton-worker ./worker && \
    CGO_ENABLED=0 go build -trimpath -o /out/baton ./starter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/baton-worker /out/baton /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/baton-worker"]
