# syntax=docker/dockerfile:1
# vaultgate image: one bundled ESM file (npm run build → dist/vaultgate.mjs) on node 20, no node_modules.
#   docker build -t ghcr.io/vaultgate/vaultgate:0.1.0 .
#   docker run --rm ghcr.io/vaultgate/vaultgate:0.1.0 validate -f - < policy.yaml
# The Helm chart runs `vaultgate webhook ...` / `vaultgate controller ...`: `vaultgate` on PATH is a link
# to the same file as the ENTRYPOINT below.

# ---- build: full dependency tree (esbuild, tsx), then the bundle ----
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The smoke run fails the build if the bundle needs anything that is not in it.
RUN npm run build && node dist/vaultgate.mjs --help > /dev/null

# ---- runtime: node and the bundle only ----
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only for everyone: the process (uid 65532) cannot change its own code, and
# nothing is written at run time, so a read-only root filesystem works (the chart mounts /tmp anyway).
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/ /app/dist/
RUN ln -s /app/dist/vaultgate.mjs /usr/local/bin/vaultgate
USER 65532:65532
ENTRYPOINT ["node", "/app/dist/vaultgate.mjs"]
CMD ["--help"]
