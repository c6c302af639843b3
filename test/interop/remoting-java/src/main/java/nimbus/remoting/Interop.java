package nimbus.remoting;

import com.alibaba.fastjson.JSON;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * RocketMQ's classic remoting client (rocketmq-client 4.9.8) against Nimbus' remoting door, one scenario per run.
 * Each line on stdout is one result: {@code sent <msgId> <offsetMsgId> <brokerName> <queueId> <queueOffset>} for a
 * send, {@code msg <json>} for a consumed message (its id, topic, tags, keys, body, queue, offsets, times,
 * reconsume times and properties); a failure exits non-zero.
 *
 * <pre>
 *   produce     &lt;namesrv&gt; &lt;topic&gt; sync|async|oneway|batch &lt;count&gt; &lt;tag&gt;
 *   push        &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;
 *   push-heartbeat-v2 (the same, with 5.x's heartbeat v2 on)
 *   lite-assign &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;
 *   query       &lt;namesrv&gt; &lt;topic&gt;
 *   transaction &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt; commit|rollback|check
 *   retry-dlq   &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt;
 *   member      &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt;
 *   live        &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt;   (AdminScenarios: the consumer mqadmin's tests talk to)
 *   tx-unknown, tx-checker, orderly-send, orderly, broadcast, lite-subscribe, delay: see Behaviours
 * </pre>
 *
 * {@code query} sends two messages (keys k-0, k-1), views each by its offset message id and by its message id,
 * and queries key k-0: {@code viewed <how> <msgId> <topic> <keys> <body>} and {@code queried <key> <msgId>...}.
 * {@code transaction} sends one message with a TransactionMQProducer whose local transaction answers COMMIT,
 * ROLLBACK or (check) UNKNOW, then for check answers the broker's first check UNKNOW and the second COMMIT:
 * {@code sent <msgId> <transactionId>}, {@code checked <n> <state> <msgId>}. {@code retry-dlq} is a push
 * consumer with maxReconsumeTimes 1 that answers every delivery RECONSUME_LATER: {@code delivery <msgId>
 * <reconsumeTimes>}; it ends after the second delivery has been sent back. {@code member} is a push consumer whose
 * rebalance timer is off (an hour), so only the broker's NOTIFY_CONSUMER_IDS_CHANGED moves its queues: it prints
 * {@code queues <broker/queueId,...>} each time they change, and shuts down when its stdin ends.
 *
 * Messages sent carry the tag, keys {@code k-<i>} and a user property {@code p=<i>}, body {@code remoting <i>}.
 * {@code push} is a clustering DefaultMQPushConsumer from the first offset that prints each distinct message and
 * ends once it has {@code count}; {@code lite-assign} is a DefaultLitePullConsumer assigned every queue of the
 * topic. Both give up after 60 s.
 */
public final class Interop {
  /** Producers' send timeout: the 4.x default (3 s) fails sends on a loaded 2-core machine running several JVMs. */
  static final int SEND_TIMEOUT_MS = 30_000;

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "produce" -> produce(args[1], args[2], args[3], Integer.parseInt(args[4]), args[5]);
      case "push" -> push(args[1], args[2], args[3], Integer.parseInt(args[4]));
      case "push-heartbeat-v2" -> {
        // 5.x's opt-in heartbeat v2 (ClientConfig.HEART_BEAT_V2, read when the consumer is made); 4.x ignores it.
        System.setProperty("com.rocketmq.heartbeat.v2", "true");
        push(args[1], args[2], args[3], Integer.parseInt(args[4]));
      }
      case "lite-assign" -> liteAssign(args[1], args[2], args[3], Integer.parseInt(args[4]));
      case "query" -> Scenarios.query(args[1], args[2]);
      case "transaction" -> Scenarios.transaction(args[1], args[2], args[3], args[4]);
      case "retry-dlq" -> Scenarios.retryDlq(args[1], args[2], args[3]);
      case "member" -> Scenarios.member(args[1], args[2], args[3]);
      case "acl-produce", "acl-push", "acl-lite", "acl-query", "tls" -> AclScenarios.run(args);
      case "live" -> AdminScenarios.live(args[1], args[2], args[3]);
      case "tx-unknown" -> Behaviours.txUnknown(args[1], args[2], args[3]);
      case "tx-checker" -> Behaviours.txChecker(args[1], args[2]);
      case "orderly-send" -> Behaviours.orderlySend(args[1], args[2], Integer.parseInt(args[3]),
          Integer.parseInt(args[4]), Integer.parseInt(args[5]));
      case "orderly" -> Behaviours.orderly(args[1], args[2], args[3], args[4]);
      case "broadcast" -> Behaviours.broadcast(args[1], args[2], args[3], Integer.parseInt(args[4]));
      case "lite-subscribe" -> Behaviours.liteSubscribe(args[1], args[2], args[3], Integer.parseInt(args[4]));
      case "delay" -> Behaviours.delay(args[1], args[2], Integer.parseInt(args[3]));
      default -> throw new IllegalArgumentException("unknown mode " + args[0]);
    }
    System.exit(0);
  }

  static Message message(String topic, String tag, int i) {
    Message m = new Message(topic, tag, "k-" + i, ("remoting " + i).getBytes(StandardCharsets.UTF_8));
    m.putUserProperty("p", String.valueOf(i));
    return m;
  }

  private static void printSent(SendResult r) {
    MessageQueue q = r.getMessageQueue();
    System.out.println("sent " + r.getMsgId() + " " + r.getOffsetMsgId() + " " + q.getBrokerName() + " "
        + q.getQueueId() + " " + r.getQueueOffset());
  }

  private static void produce(String ns, String topic, String how, int count, String tag) throws Exception {
    DefaultMQProducer producer = Clients.producer(ns, "nimbus-remoting-producer", "p");
    producer.start();
    try {
      switch (how) {
        case "sync" -> {
          for (int i = 0; i < count; i++) printSent(producer.send(message(topic, tag, i)));
        }
        case "async" -> {
          CountDownLatch done = new CountDownLatch(count);
          AtomicReference<Throwable> failed = new AtomicReference<>();
          for (int i = 0; i < count; i++) {
            producer.send(message(topic, tag, i), new SendCallback() {
              @Override
              public void onSuccess(SendResult r) {
                synchronized (Interop.class) {
                  printSent(r);
                }
                done.countDown();
              }

              @Override
              public void onException(Throwable e) {
                failed.set(e);
                done.countDown();
              }
            });
          }
          if (!done.await(60, TimeUnit.SECONDS)) throw new IllegalStateException("async sends did not end");
          if (failed.get() != null) throw new IllegalStateException("an async send failed", failed.get());
        }
        case "oneway" -> {
          for (int i = 0; i < count; i++) producer.sendOneway(message(topic, tag, i));
          System.out.println("oneway " + count);
        }
        case "batch" -> {
          List<Message> batch = new ArrayList<>();
          for (int i = 0; i < count; i++) batch.add(message(topic, tag, i));
          SendResult r = producer.send(batch);
          for (String id : r.getMsgId().split(",")) System.out.println("sent " + id + " " + r.getOffsetMsgId() + " "
              + r.getMessageQueue().getBrokerName() + " " + r.getMessageQueue().getQueueId() + " " + r.getQueueOffset());
        }
        default -> throw new IllegalArgumentException("unknown send " + how);
      }
    } finally {
      producer.shutdown();
    }
  }

  private static String line(MessageExt m, String brokerName) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("msgId", m.getMsgId());
    if (m instanceof MessageClientExt c) out.put("offsetMsgId", c.getOffsetMsgId());
    out.put("topic", m.getTopic());
    out.put("tags", m.getTags());
    out.put("keys", m.getKeys());
    out.put("body", new String(m.getBody(), StandardCharsets.UTF_8));
    out.put("brokerName", brokerName);
    out.put("queueId", m.getQueueId());
    out.put("queueOffset", m.getQueueOffset());
    out.put("bornTimestamp", m.getBornTimestamp());
    out.put("storeTimestamp", m.getStoreTimestamp());
    out.put("reconsumeTimes", m.getReconsumeTimes());
    out.put("flag", m.getFlag());
    out.put("properties", m.getProperties());
    return "msg " + JSON.toJSONString(out);
  }

  private static void push(String ns, String group, String topic, int count) throws Exception {
    DefaultMQPushConsumer consumer = Clients.pushConsumer(ns, group, "c");
    // Shutdown waits for the consume tasks to record their offsets, then commits them (without it, on a loaded
    // machine, no task may have recorded one yet and nothing is committed).
    consumer.setAwaitTerminationMillisWhenShutdown(30_000);
    consumer.subscribe(topic, "*");
    Clients.consumeUntil(consumer, count, "consumed", (m, q) -> {
      synchronized (Interop.class) {
        System.out.println(line(m, q.getBrokerName()));
      }
    });
  }

  private static void liteAssign(String ns, String group, String topic, int count) throws Exception {
    DefaultLitePullConsumer consumer = Clients.liteConsumer(ns, group, null, "l");
    consumer.setAutoCommit(true);
    consumer.start();
    try {
      Collection<MessageQueue> queues = consumer.fetchMessageQueues(topic);
      consumer.assign(queues);
      for (MessageQueue q : queues) consumer.seekToBegin(q);
      Clients.pollUntil(consumer, count, m -> System.out.println(line(m, m.getBrokerName())));
      consumer.commitSync();
    } finally {
      consumer.shutdown();
    }
  }
}
