#!/usr/bin/env bash
# Redis Streams beside `npm run bench -- --suite peer` (docs/benchmarks.md, "Against a peer"): starts a
# throw-away redis-server (AOF, appendfsync everysec) on a free port in a temp folder, measures with a Node
# client like the Nimbus harness (test/bench/peer-redis.ts: produce = 32 XADDs of 1 KiB pipelined, one batch
# in flight; consume = XRANGE COUNT 32, one read in flight; end-to-end = one XADD per message at 2,000/s with
# a consumer in XREAD BLOCK), then with redis-benchmark (a C client: the same produce and consume), and stops
# the server it started. Needs redis-server and redis-benchmark on PATH (Debian: apt-get install -y
# redis-server). Not a test dependency.
set -euo pipefail
N=${N:-200000}
dir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --dir "$dir" --appendonly yes --appendfsync everysec --save '' --daemonize no \
  --logfile "$dir/redis.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
echo "redis $(redis-server --version | cut -d' ' -f3), 1 KiB values, AOF everysec, load $(cut -d' ' -f1 /proc/loadavg)"
npx tsx "$(dirname "$0")/peer-redis.ts" --port "$port"
redis-cli -p "$port" del bench e2e >/dev/null
echo "redis-benchmark (C client):"
body=$(head -c 768 /dev/urandom | base64 -w0 | head -c 1024)
produce=$(redis-benchmark -p "$port" -c 1 -P 32 -n "$N" -q XADD bench '*' d "$body" | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1)
echo "produce, XADD pipelined 32 deep (one batch in flight): ${produce% requests per second} msg/s"
reads=$(redis-benchmark -p "$port" -c 1 -P 1 -n $((N / 32)) -q XRANGE bench - + COUNT 32 | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1)
echo "consume, XRANGE COUNT 32 (one read in flight): $(awk "BEGIN { printf \"%.0f\", ${reads% requests per second} * 32 }") msg/s"
