# The production image: `docker build -t messaging-api .`
# It runs one role of the service (ROLE=api, worker or all) against the PostgreSQL in
# DATABASE_URL; the embedded database is for machines without one, not for containers.

# --- dependencies, exactly as locked (the build tools never reach the final image) ---
FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY test/openapi-codegen/package.json test/openapi-codegen/
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node node_modules/.bin/node

# --- the service ---
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    ROLE=all \
    DATA_DIR=/var/lib/messaging-api
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY server ./server
COPY routers ./routers
COPY workers ./workers
COPY widget ./widget
# DATA_DIR holds the generated TLS certificate (unless TLS_CERT_FILE is given); a volume in compose.
RUN mkdir -p /var/lib/messaging-api && chown node:node /var/lib/messaging-api
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "server/healthcheck.ts"]
CMD ["node", "server/main.ts"]
