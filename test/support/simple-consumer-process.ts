/**
 * @module A SimpleConsumer in its own process, for the crash test: group argv[3], topic argv[4] on the API at
 * argv[2]; receives until it holds argv[5] messages (invisible for argv[6] ms), never acks, reports
 * `{ held: [body, ...] }` and waits to be killed (SIGKILL: a crash while holding them).
 */
import { SimpleConsumer } from "../../lib/client/index.js";
import { TEST_TIMEOUT_MS } from "./timeouts.js";

const [url, group, topic, count, invisible] = process.argv.slice(2);
if (!url || !group || !topic || !process.send)
  throw new Error("usage: fork(simple-consumer-process.ts, [url, group, topic, n, ms])");
const send = process.send.bind(process);
process.on("disconnect", () => process.exit(0));
const consumer = new SimpleConsumer({
  consumerGroup: group,
  endpoints: url,
  timeoutMs: TEST_TIMEOUT_MS,
  subscriptions: { [topic]: "*" },
  awaitDuration: 2000,
});
await consumer.startup();
const held: string[] = [];
while (held.length < Number(count)) {
  for (const m of await consumer.receive(Number(count) - held.length, Number(invisible))) {
    held.push(new TextDecoder().decode(m.body));
  }
}
send({ held });
setInterval(() => {}, 1 << 30);
