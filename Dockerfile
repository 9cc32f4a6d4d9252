# One image for the api, the worker and the migrate job; compose picks the command. Node 24, the LTS line;
# package.json's engines lists the Node lines the tests run on.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Exactly the lock's versions; it holds every platform's native bindings, so npm ci accepts it anywhere.
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# jemalloc in place of glibc's malloc for every process of the image: after a burst (a backlog published, a
# drain) glibc keeps what the SDK core's threads allocated in fragmented arenas, and jemalloc hands it back.
# A worker with 10,000 deliveries waiting holds far less (docs/performance.md "Memory"). Linked at one path
# whatever the architecture's library directory.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && ln -s "$(dpkg -L libjemalloc2 | grep '/libjemalloc\.so\.2$')" /usr/local/lib/libjemalloc.so.2 \
 && rm -rf /var/lib/apt/lists/*
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
WORKDIR /app
COPY package.json package-lock.json ./
# The copies below are package.json's `files`: the build's output and src/, the one folder of shipped source
# (test/unit/image-files.test.ts rebuilds the image's file set from these lines and loads every command from it).
# tsx stays: the operator CLI (src/cli/bin.js) runs from source. Tooling at the root (temporal-tools/, building and
# running Temporal on a developer's machine) stays out: here `start` needs TEMPORAL_ADDRESS and `temporal-server`
# says to use a checkout.
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY --from=build /app/src ./src
COPY --from=build /app/tsconfig.json ./
USER node
EXPOSE 3000
CMD ["node", "dist/api/server.js"]
