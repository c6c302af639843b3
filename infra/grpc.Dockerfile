# `nimbus proxy` for the `grpc` stage setting (infra/grpc.ts): Node 22 on arm64, the built CLI and the RocketMQ
# .proto files it loads (lib/grpc/vendor/rocketmq-apis), production dependencies only.
FROM --platform=linux/arm64 node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY lib ./lib
RUN npx tsc -p tsconfig.build.json

FROM --platform=linux/arm64 node:22-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm rebuild better-sqlite3
COPY --from=build /app/dist ./dist
COPY lib/grpc/vendor/rocketmq-apis ./lib/grpc/vendor/rocketmq-apis
USER node
EXPOSE 8081
CMD ["node", "dist/lib/cli/main.js", "proxy", "--host", "0.0.0.0"]
