package nimbus.remoting;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

/**
 * The client behaviours of Interop beyond its sends, reads and features: a transaction whose producer is killed
 * and checked with another process of its group, orderly consumption with queue locks, broadcasting, a lite pull
 * consumer that subscribes, and delay levels. Each prints one result per line (see Interop's modes).
 *
 * <pre>
 *   tx-unknown     &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt;        half message answered UNKNOW, every check UNKNOW; runs until killed
 *   tx-checker     &lt;namesrv&gt; &lt;group&gt;                commits on its first check, then ends
 *   orderly-send   &lt;namesrv&gt; &lt;topic&gt; &lt;keys&gt; &lt;from&gt; &lt;to&gt;  "key-k" seq from..to-1 each, queue chosen by key
 *   orderly        &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt; &lt;markerDir&gt; MessageListenerOrderly; until stdin ends
 *   broadcast      &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;  BROADCASTING push consumer; ends with count messages
 *   lite-subscribe &lt;namesrv&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;  DefaultLitePullConsumer.subscribe; ends with count
 *   delay          &lt;namesrv&gt; &lt;topic&gt; &lt;level&gt;          a message of that delay level, then an immediate one
 * </pre>
 */
final class Behaviours {
  private Behaviours() {}

  private static synchronized void print(String line) {
    System.out.println(line);
  }

  /** Sends a half message, answers it and every check UNKNOW, and waits to be killed: {@code sent}, {@code checked}. */
  static void txUnknown(String ns, String group, String topic) throws Exception {
    TransactionMQProducer producer = Clients.txProducer(ns, group, "tu");
    AtomicInteger checks = new AtomicInteger();
    producer.setTransactionListener(Clients.transactions(LocalTransactionState.UNKNOW, msg -> {
      print("checked " + checks.incrementAndGet() + " UNKNOW " + msg.getTransactionId());
      return LocalTransactionState.UNKNOW;
    }));
    producer.start();
    Message m = new Message(topic, "TagK", "tx-kill", "transaction killed".getBytes(StandardCharsets.UTF_8));
    SendResult r = producer.sendMessageInTransaction(m, null);
    print("sent " + r.getMsgId() + " " + r.getTransactionId() + " " + r.getSendStatus());
    Thread.sleep(Long.MAX_VALUE);
  }

  /** A producer of the group that answers its first check COMMIT, then ends: {@code started}, {@code checked}. */
  static void txChecker(String ns, String group) throws Exception {
    TransactionMQProducer producer = Clients.txProducer(ns, group, "tc");
    CountDownLatch committed = new CountDownLatch(1);
    producer.setTransactionListener(Clients.transactions(LocalTransactionState.UNKNOW, msg -> {
      print("checked COMMIT_MESSAGE " + msg.getTransactionId() + " " + msg.getTopic());
      committed.countDown();
      return LocalTransactionState.COMMIT_MESSAGE;
    }));
    producer.start();
    print("started " + producer.getDefaultMQProducerImpl().getMqClientFactory().getClientId());
    try {
      if (!committed.await(90, TimeUnit.SECONDS)) throw new IllegalStateException("never checked");
      // The answer is a oneway END_TRANSACTION from the check executor: let it go out before shutdown.
      Thread.sleep(1000);
    } finally {
      producer.shutdown();
    }
  }

  /** Sends seq from..to-1 of each key, key-major per seq, to the queue of the key: {@code sent <key> <seq> <queue>}. */
  static void orderlySend(String ns, String topic, int keys, int from, int to) throws Exception {
    DefaultMQProducer producer = Clients.producer(ns, "nimbus-remoting-orderly", "os");
    producer.start();
    try {
      for (int seq = from; seq < to; seq++) {
        for (int k = 0; k < keys; k++) {
          Message m = new Message(topic, "TagO", "key-" + k, (k + " " + seq).getBytes(StandardCharsets.UTF_8));
          SendResult r = producer.send(m, (List<MessageQueue> mqs, Message msg, Object arg) ->
              mqs.get((Integer) arg % mqs.size()), k);
          print("sent key-" + k + " " + seq + " " + Clients.queueName(r.getMessageQueue()));
        }
      }
    } finally {
      producer.shutdown();
    }
  }

  /**
   * An orderly push consumer: {@code consumed <key> <seq> <queue>} per message, {@code locked <queues>} each time the
   * set of queues it holds locked changes, and {@code overlap <queue>} if another process was consuming the same
   * queue at the same moment (a marker file per queue in markerDir, created exclusively while a message is consumed).
   */
  static void orderly(String ns, String group, String topic, String markerDir) throws Exception {
    // Read once when the rebalance service's class loads: a queue refused while its last holder still had it locked
    // is asked for again within a second (RocketMQ's default is 20 s).
    System.setProperty("rocketmq.client.rebalance.waitInterval", "1000");
    DefaultMQPushConsumer consumer = Clients.pushConsumer(ns, group, "o");
    consumer.subscribe(topic, "*");
    Path dir = Path.of(markerDir);
    consumer.registerMessageListener((MessageListenerOrderly) (msgs, context) -> {
      String queue = Clients.queueName(context.getMessageQueue());
      Path marker = dir.resolve(queue.replace('/', '-'));
      try {
        Files.createFile(marker);
      } catch (FileAlreadyExistsException e) {
        print("overlap " + queue);
        return ConsumeOrderlyStatus.SUCCESS;
      } catch (java.io.IOException e) {
        throw new IllegalStateException(e);
      }
      try {
        for (MessageExt m : msgs) {
          String[] body = new String(m.getBody(), StandardCharsets.UTF_8).split(" ");
          print("consumed " + m.getKeys() + " " + body[1] + " " + queue);
        }
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        try {
          Files.deleteIfExists(marker);
        } catch (java.io.IOException e) {
          print("marker " + e);
        }
      }
      return ConsumeOrderlyStatus.SUCCESS;
    });
    consumer.start();
    Clients.watchUntilStdinCloses(() -> String.join(",",
        Clients.queues(consumer, topic, q -> q.isLocked() && !q.isDropped())), "locked ");
    consumer.shutdown();
  }

  /** A BROADCASTING push consumer from the first offset: {@code got <msgId> <queue>}; ends with count messages. */
  static void broadcast(String ns, String group, String topic, int count) throws Exception {
    DefaultMQPushConsumer consumer = Clients.pushConsumer(ns, group, null, "b", MessageModel.BROADCASTING);
    consumer.subscribe(topic, "*");
    Clients.consumeUntil(consumer, count, "got",
        (m, q) -> print("got " + m.getMsgId() + " " + Clients.queueName(q)));
  }

  /** DefaultLitePullConsumer.subscribe (its own rebalance) from the first offset: {@code got <msgId> <queue>}. */
  static void liteSubscribe(String ns, String group, String topic, int count) throws Exception {
    DefaultLitePullConsumer consumer = Clients.liteConsumer(ns, group, null, "ls");
    consumer.setAutoCommit(false);
    consumer.subscribe(topic, "*");
    consumer.start();
    try {
      int seen = Clients.pollUntil(consumer, count,
          m -> print("got " + m.getMsgId() + " " + m.getBrokerName() + "/" + m.getQueueId()));
      // Records the offsets; shutdown persists them to the brokers.
      consumer.commitSync();
      print("committed " + seen);
    } finally {
      consumer.shutdown();
    }
  }

  /** A message of delay level {@code level}, then an immediate one, both to the topic's first queue. */
  static void delay(String ns, String topic, int level) throws Exception {
    DefaultMQProducer producer = Clients.producer(ns, "nimbus-remoting-delay", "dl");
    producer.start();
    try {
      Message delayed = new Message(topic, "TagL", "delayed", "delayed".getBytes(StandardCharsets.UTF_8));
      delayed.setDelayTimeLevel(level);
      Message now = new Message(topic, "TagL", "immediate", "immediate".getBytes(StandardCharsets.UTF_8));
      for (Message m : new Message[] {delayed, now}) {
        SendResult r = producer.send(m, (List<MessageQueue> mqs, Message msg, Object arg) -> mqs.get(0), null);
        print("sent " + r.getMsgId() + " " + m.getKeys() + " " + r.getSendStatus());
      }
    } finally {
      producer.shutdown();
    }
  }
}
