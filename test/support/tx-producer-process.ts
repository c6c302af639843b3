/**
 * @module A producer process for the transaction scenario test: a TransactionProducer of group argv[3]
 * on the API at argv[2], heartbeating every 50 ms. Role argv[4]:
 * - `unknown`: sends one transactional message to topic argv[5] whose local transaction says UNKNOW, reports
 *   `{ transactionId }` to the parent, and waits to be killed;
 * - `commit-on-check`: answers every check-back with COMMIT_MESSAGE and reports `{ checked: msgId }` for each.
 * Reports `"ready"` once started.
 */
import { Message } from "../../lib/client/message.js";
import { LocalTransactionState, TransactionProducer } from "../../lib/client/producer/transaction-producer.js";

const [url, group, role, topic] = process.argv.slice(2);
if (!url || !group || !process.send || (role !== "unknown" && role !== "commit-on-check")) {
  throw new Error("usage: fork(tx-producer-process.ts, [url, group, unknown|commit-on-check, topic?])");
}
const send = process.send.bind(process);
// The parent gone (a failed test), this process goes too.
process.on("disconnect", () => process.exit(0));
const producer = new TransactionProducer({
  producerGroup: group,
  endpoints: url,
  heartbeatBrokerInterval: 50,
  sendMsgTimeout: 30_000,
});
producer.setTransactionListener({
  executeLocalTransaction: () => LocalTransactionState.UNKNOW,
  checkLocalTransaction: (msg) => {
    send({ checked: msg.msgId });
    return role === "commit-on-check" ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.UNKNOW;
  },
});
await producer.start();
send("ready");
if (role === "unknown" && topic) {
  const result = await producer.sendMessageInTransaction(new Message(topic, "TagA", "order-1", "paid"));
  send({ transactionId: result.transactionId });
}
// Runs until the parent kills it (the heartbeat timers are unref'd: this keeps the process alive).
setInterval(() => {}, 1 << 30);
