# syntax=docker/dockerfile:1
# revintel: one executable. Build stage compiles it; the runtime stage is a glibc slim image with
# nothing but the binary, running as a non-root user, its embedded database on a volume.

FROM oven/bun:1.4.4 AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile
COPY drizzle ./drizzle
COPY scripts ./scripts
COPY src ./src
ENV NODE_ENV=production
# The build bundles the web console (src/console) into build/console.pack and embeds it.
RUN bun run build && ./dist/revintel version

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 revintel \
 && useradd --system --uid 10001 --gid revintel --home-dir /var/lib/revintel --create-home revintel \
 && mkdir -p /var/lib/revintel/data \
 && chown -R revintel:revintel /var/lib/revintel
COPY --from=build --chown=root:root --chmod=0755 /src/dist/revintel /usr/local/bin/revintel

USER revintel:revintel
WORKDIR /var/lib/revintel
# Without DATABASE_URL the embedded database lives in DATA_DIR: keep it on a volume.
ENV PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/var/lib/revintel/data
VOLUME ["/var/lib/revintel/data"]
EXPOSE 3000
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/revintel"]
CMD ["serve"]
