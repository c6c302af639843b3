/**
 * Example: a TransactionProducer. order-1's local transaction commits, order-2's rolls back, and order-3's
 * outcome is unknown at first, so the broker asks back later and the listener's check commits it.
 * Run it next to the local broker: `npx tsx docs/examples/transaction-producer.ts`. The first check-back comes
 * `--transaction-timeout` after the send and then every `--transaction-check-interval` (RocketMQ's 6 s and
 * 60 s by default; `npm run dev -- --transaction-timeout 1000 --transaction-check-interval 1000` for a quick
 * run). In an app, import from "nimbus-mq/client".
 */
import { LocalTransactionState, Message, NimbusApi, TransactionProducer } from "../../lib/client/index.js";

const endpoints = process.env.NIMBUS_URL ?? "http://127.0.0.1:9876";
/** What each order's local transaction (say, a database write) comes to. */
const outcomes = new Map<string, LocalTransactionState>([
  ["order-1", LocalTransactionState.COMMIT_MESSAGE],
  ["order-2", LocalTransactionState.ROLLBACK_MESSAGE],
  ["order-3", LocalTransactionState.UNKNOW],
]);

// Check-backs arrive with heartbeats: a transactional producer heartbeats more often than the default 30 s.
const producer = new TransactionProducer({ producerGroup: "ExampleTxGroup", endpoints, heartbeatBrokerInterval: 1000 });
producer.setTransactionListener({
  executeLocalTransaction: (_msg, orderId) => outcomes.get(String(orderId)) ?? LocalTransactionState.UNKNOW,
  checkLocalTransaction: (msg) => {
    console.log(`check-back for ${msg.keys[0]}: the order exists, commit`);
    return LocalTransactionState.COMMIT_MESSAGE;
  },
});
await producer.start();

const ids = new Map<string, string>();
for (const orderId of outcomes.keys()) {
  const result = await producer.sendMessageInTransaction(
    new Message("TxTopic", "TagA", orderId, `${orderId} paid`),
    orderId,
  );
  ids.set(orderId, result.transactionId);
  console.log(`${orderId}: ${result.localTransactionState} (transaction ${result.transactionId})`);
}

// order-3 stays PENDING until the check-back answers.
const api = new NimbusApi({ endpoints });
const pending = ids.get("order-3") ?? "";
for (let waited = 0; waited < 180_000; waited += 500) {
  const { state } = await api.transactionInfo(pending, "ExampleTxGroup");
  if (state !== "PENDING") {
    console.log(`order-3: ${state} after a check-back`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}
await producer.shutdown();
