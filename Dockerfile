# GenGate's container image (docs/operations.md, "Deploy with compose"; decision 2600).
# Two stages: the build stage installs every package and compiles the server, the SDK and the
# console; the runtime stage keeps the compiled program and the production packages only (with the
# npm ffmpeg and ffprobe binaries) and runs as the unprivileged `node` user.
#
#   docker build -t gengate .
#   docker run -p 8080:8080 -v gengate-data:/data gengate
#
# The Node line is pinned to an LTS release; raise NODE_VERSION on purpose, not by accident.
ARG NODE_VERSION=24.11.1

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles itself when no prebuilt binary fits this Node (python3, make, g++).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts off for the install (a layer that changes only with the lock file), as `prepare` (the
# build) needs the sources, copied next; `npm rebuild` then runs the packages' own install steps
# (better-sqlite3's binary, esbuild's, the ffmpeg packages').
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm rebuild \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The built-in model definitions, read at start (src/catalog/defaults.ts).
COPY --from=build /app/catalog ./catalog
COPY --from=build /app/bin ./bin
COPY --from=build /app/packages/client/package.json ./packages/client/package.json
COPY --from=build /app/packages/client/dist ./packages/client/dist
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness only: readiness (/readyz) is the orchestrator's or the proxy's business.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node runs as PID 1 and gets SIGTERM itself: `serve` drains on it (docs/operations.md, "Stopping").
ENTRYPOINT ["node", "/app/dist/main.js"]
CMD ["serve"]
