# queue-ops: the Slack bot (HTTP mode on $PORT, or Socket Mode with health and metrics on
# $METRICS_PORT). Multi-stage: compile with dev dependencies, ship production ones only.
FROM node:20-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig*.json ./
COPY scripts ./scripts
COPY src ./src
COPY bin ./bin
RUN npm run build

FROM node:20-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# No lifecycle scripts (the build already ran above), except the native addon's own.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3

FROM node:20-slim
# MALLOC_ARENA_MAX and MALLOC_TRIM_THRESHOLD_: as `npm start` sets them (glibc's per-thread arenas
# otherwise keep what V8's background threads freed, and its self-raising trim threshold keeps
# megabytes of freed memory: a few MB more RSS after every burst of commands).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072 \
    PORT=3000 \
    QUEUE_OPS_CONFIG=/etc/queue-ops/queue-ops.yml
WORKDIR /app
# A font for the text in `trend` charts (resvg draws no text without one); about 1.5 MB.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 queueops \
 && useradd --system --uid 10001 --gid queueops --home-dir /app --shell /usr/sbin/nologin queueops \
 && mkdir -p /app/data \
 && chown queueops:queueops /app/data
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
USER 10001:10001
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const e=process.env;fetch('http://127.0.0.1:'+((e.SLACK_APP_TOKEN&&e.METRICS_PORT)||e.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# As `npm start` runs it: source maps for stack traces, a heap cap sized for one bot (raise it
# with NODE_OPTIONS for thousands of queues), and `gc` for the collection once a burst is over.
CMD ["node", "--enable-source-maps", "--max-old-space-size=128", "--max-semi-space-size=2", "--expose-gc", "dist/main.js"]
