/**
 * @module The producers of the proxy-cost suite (proxy-cost.ts), in their own process: `<endpoint> <topic>
 * <producers> <seconds>`. Starts that many RocketMQ Node.js Producers (one connection each), sends one message
 * from each, prints `WARM`, waits for a line on stdin, then keeps one send in flight per producer for the seconds
 * given and prints `RESULT {latencies (sorted ms), errors, seconds}`.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { Producer } from "rocketmq-client-nodejs";

const [endpoint = "", topic = "", producerCount = "64", secondsArg = "20"] = process.argv.slice(2);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

async function main(): Promise<void> {
  const producers: Producer[] = [];
  for (let i = 0; i < Number(producerCount); i++) {
    const p = new Producer({ endpoints: endpoint, namespace: "", logger: silent, topics: [topic] });
    await p.startup();
    producers.push(p);
  }
  const body = randomBytes(1024);
  await Promise.all(producers.map((p) => p.send({ topic, body })));
  process.stdout.write("WARM\n");
  await once(process.stdin, "data");
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + Number(secondsArg) * 1000;
  await Promise.all(
    producers.map(async (p) => {
      while (performance.now() < deadline && errors < 100) {
        const t = performance.now();
        try {
          await p.send({ topic, body });
          latencies.push(performance.now() - t);
        } catch (err) {
          if (errors++ === 0) console.error("proxy-cost: a send failed:", err);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  process.stdout.write(`RESULT ${JSON.stringify({ latencies, errors, seconds })}\n`);
  await Promise.allSettled(producers.map((p) => p.shutdown()));
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
