# mcp-sandbox-proxy container image: one static binary on an empty base.
#   docker build --build-arg GIT_REVISION=$(git rev-parse --short=12 HEAD) -t mcp-sandbox-proxy .
# The runtime stage holds the binary and nothing else: no shell, no libc, no CA store (the
# service connects out only for [acme], to a CA whose roots acme.ca_roots names). Probes go to
# the admin port; there is no HEALTHCHECK.

ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS build
ARG GIT_REVISION=unknown
ENV MCP_SANDBOX_PROXY_GIT_REV=${GIT_REVISION}
WORKDIR /src
COPY . .
# The release build (scripts/build): glibc, statically linked, with its dependency list
# embedded, the same bytes as a release of this commit built with the same toolchain. Host
# names are resolved only for [acme]'s CA, by the files and DNS lookups a static glibc does
# itself (checked with this build), so no NSS module and no second toolchain (musl) is needed.
RUN install -D -m 0555 "$(scripts/build)" /out/mcp-sandbox-proxy

# --- runtime (everything below is the published image) ---
FROM scratch AS runtime
ARG VERSION=0.1.0
ARG GIT_REVISION=unknown
# The commit's time (scripts/release), so that the image is the same bytes whenever it is built.
ARG CREATED=unknown
COPY --from=build /out/mcp-sandbox-proxy /mcp-sandbox-proxy
LABEL org.opencontainers.image.title="mcp-sandbox-proxy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${GIT_REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.description="The sandbox-proxy origin for MCP Apps views" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0" \
      org.opencontainers.image.source="https://github.com/mcp-sandbox-proxy/mcp-sandbox-proxy" \
      org.opencontainers.image.documentation="https://github.com/mcp-sandbox-proxy/mcp-sandbox-proxy/blob/main/docs/operations.md" \
      org.opencontainers.image.vendor="mcp-sandbox-proxy"
# A numeric non-root user: Kubernetes can verify runAsNonRoot without a passwd file.
USER 65532:65532
# Public listener (TLS) and admin listener, as in config/example.toml.
EXPOSE 8443 9464
# SIGTERM drains: not ready, finish in-flight requests, exit 0 within limits.shutdown_grace.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/mcp-sandbox-proxy"]
CMD ["serve", "--config", "/etc/mcp-sandbox-proxy/config.toml", "--log-format", "json"]
