package nimbus.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;
import org.apache.rocketmq.client.java.impl.producer.SendReceiptImpl;

/**
 * RocketMQ's Java client against a Nimbus gRPC endpoint, one scenario per run. Each line on stdout is one
 * result: {@code sent <messageId> [...]}, {@code received <messageId> <tag> <deliveryAttempt> <body>},
 * {@code acked <messageId>}, {@code changed <messageId> <deliveryAttempt>}, {@code consumed <messageId> <tag> <body>},
 * {@code checked <messageId>} or {@code ready}; a failure exits non-zero.
 *
 * <pre>
 *   produce       &lt;endpoint&gt; &lt;topic&gt; &lt;count&gt; [tag]
 *   produce-fifo  &lt;endpoint&gt; &lt;topic&gt; &lt;count per group&gt; &lt;message group&gt;...
 *   produce-delay &lt;endpoint&gt; &lt;topic&gt; &lt;delay ms&gt;
 *   transaction   &lt;endpoint&gt; &lt;topic&gt; commit|rollback|leave
 *   check-back    &lt;endpoint&gt; &lt;topic&gt;
 *   consume       &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt; [tag expression]
 *   dead-letter   &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt;
 *   push          &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt; [tag expression]
 *   first-flow    &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;
 * </pre>
 *
 * {@code first-flow} is the documented first flow: it starts a SimpleConsumer, then a Producer sends
 * {@code count} messages ({@code sent <messageId>}), then the consumer receives and acks until it has every one
 * ({@code received <messageId> ...}, {@code acked <messageId>}); it gives up after 60 s.
 *
 * {@code produce-fifo} sends {@code count} messages of each message group, the groups interleaved
 * ({@code sent <messageId> <group> <i>}). {@code produce-delay} sends one message due {@code delay ms} from now
 * ({@code sent <messageId> <deliveryTimestamp>}). {@code transaction} sends one half message
 * ({@code sent <messageId> <transactionId>}) and commits it, rolls it back, or leaves it undecided and exits.
 * {@code check-back} is a transactional producer of the topic whose checker answers COMMIT to every check-back
 * ({@code checked <messageId>}); it prints {@code ready} once started and runs until its stdin ends.
 * {@code dead-letter} is a SimpleConsumer that never acks: it receives with a 60 s invisible duration, changes
 * each delivery's to 1 s ({@code changed <messageId> <deliveryAttempt>}), and keeps receiving, printing every delivery, until its stdin
 * ends. Both wait for stdin at most 90 s.
 *
 * {@code consume} is a SimpleConsumer that receives with a 1 s invisible duration and acks every message
 * except the first it is given, which it leaves to come back (delivery attempt 2) and acks then; it ends once
 * {@code count} distinct messages are acked. {@code push} is a PushConsumer whose listener consumes every
 * message (SUCCESS); it ends once {@code count} distinct messages are consumed. Each gives up after 60 s.
 */
public final class Interop {
  private Interop() {}

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    ClientConfiguration config = ClientConfiguration.newBuilder()
        .setEndpoints(args[1])
        .setRequestTimeout(Duration.ofSeconds(10))
        .enableSsl(false)
        .build();
    ClientServiceProvider provider = ClientServiceProvider.loadService();
    if (mode.equals("produce")) {
      produce(provider, config, args[2], Integer.parseInt(args[3]), args.length > 4 ? args[4] : "java");
    } else if (mode.equals("produce-fifo")) {
      produceFifo(provider, config, args[2], Integer.parseInt(args[3]), java.util.Arrays.copyOfRange(args, 4,
          args.length));
    } else if (mode.equals("produce-delay")) {
      produceDelay(provider, config, args[2], Long.parseLong(args[3]));
    } else if (mode.equals("transaction")) {
      transaction(provider, config, args[2], args[3]);
    } else if (mode.equals("check-back")) {
      checkBack(provider, config, args[2]);
    } else if (mode.equals("dead-letter")) {
      deadLetter(provider, config, args[2], args[3]);
    } else if (mode.equals("consume")) {
      consume(provider, config, args[2], args[3], Integer.parseInt(args[4]), args.length > 5 ? args[5] : "*");
    } else if (mode.equals("first-flow")) {
      firstFlow(provider, config, args[2], args[3], Integer.parseInt(args[4]));
    } else if (mode.equals("push")) {
      push(provider, config, args[2], args[3], Integer.parseInt(args[4]), args.length > 5 ? args[5] : "*");
    } else {
      throw new IllegalArgumentException("unknown mode " + mode);
    }
    System.exit(0);
  }

  private static void produce(ClientServiceProvider provider, ClientConfiguration config, String topic, int count,
      String tag) throws Exception {
    try (Producer producer = provider.newProducerBuilder()
        .setClientConfiguration(config)
        .setTopics(topic)
        .build()) {
      for (int i = 0; i < count; i++) {
        Message message = provider.newMessageBuilder()
            .setTopic(topic)
            .setTag(tag)
            .setKeys("java-key-" + i)
            .addProperty("n", String.valueOf(i))
            .setBody(("java " + i).getBytes(StandardCharsets.UTF_8))
            .build();
        SendReceipt receipt = producer.send(message);
        System.out.println("sent " + receipt.getMessageId());
      }
    }
  }

  private static void consume(ClientServiceProvider provider, ClientConfiguration config, String group, String topic,
      int count, String expression) throws Exception {
    FilterExpression filter = new FilterExpression(expression, FilterExpressionType.TAG);
    try (SimpleConsumer consumer = provider.newSimpleConsumerBuilder()
        .setClientConfiguration(config)
        .setConsumerGroup(group)
        .setAwaitDuration(Duration.ofSeconds(2))
        .setSubscriptionExpressions(Collections.singletonMap(topic, filter))
        .build()) {
      Set<String> acked = new HashSet<>();
      String leftOnce = null;
      long deadline = System.currentTimeMillis() + 60_000;
      while (acked.size() < count && System.currentTimeMillis() < deadline) {
        for (MessageView view : consumer.receive(16, Duration.ofSeconds(1))) {
          String id = view.getMessageId().toString();
          String body = StandardCharsets.UTF_8.decode(view.getBody()).toString();
          System.out.println("received " + id + " " + view.getTag().orElse("") + " " + view.getDeliveryAttempt()
              + " " + body);
          if (leftOnce == null) {
            leftOnce = id;
            continue;
          }
          consumer.ack(view);
          acked.add(id);
          System.out.println("acked " + id);
        }
      }
      if (acked.size() < count) throw new IllegalStateException("acked " + acked.size() + " of " + count);
    }
  }

  private static void firstFlow(ClientServiceProvider provider, ClientConfiguration config, String group,
      String topic, int count) throws Exception {
    FilterExpression all = new FilterExpression("*", FilterExpressionType.TAG);
    try (SimpleConsumer consumer = provider.newSimpleConsumerBuilder()
        .setClientConfiguration(config)
        .setConsumerGroup(group)
        .setAwaitDuration(Duration.ofSeconds(2))
        .setSubscriptionExpressions(Collections.singletonMap(topic, all))
        .build()) {
      Set<String> sent = new HashSet<>();
      try (Producer producer = producer(provider, config, topic)) {
        for (int i = 0; i < count; i++) {
          Message message = provider.newMessageBuilder()
              .setTopic(topic)
              .setTag("first")
              .setBody(("first flow " + i).getBytes(StandardCharsets.UTF_8))
              .build();
          String id = producer.send(message).getMessageId().toString();
          sent.add(id);
          System.out.println("sent " + id);
        }
      }
      Set<String> acked = new HashSet<>();
      long deadline = System.currentTimeMillis() + 60_000;
      while (!acked.containsAll(sent) && System.currentTimeMillis() < deadline) {
        for (MessageView view : consumer.receive(16, Duration.ofSeconds(30))) {
          String id = view.getMessageId().toString();
          System.out.println("received " + id + " " + view.getTag().orElse("") + " " + view.getDeliveryAttempt() + " "
              + StandardCharsets.UTF_8.decode(view.getBody()));
          consumer.ack(view);
          acked.add(id);
          System.out.println("acked " + id);
        }
      }
      if (!acked.containsAll(sent)) throw new IllegalStateException("acked " + acked.size() + " of " + count);
    }
  }

  private static void push(ClientServiceProvider provider, ClientConfiguration config, String group, String topic,
      int count, String expression) throws Exception {
    FilterExpression filter = new FilterExpression(expression, FilterExpressionType.TAG);
    Set<String> consumed = ConcurrentHashMap.newKeySet();
    CountDownLatch done = new CountDownLatch(count);
    try (PushConsumer consumer = provider.newPushConsumerBuilder()
        .setClientConfiguration(config)
        .setConsumerGroup(group)
        .setSubscriptionExpressions(Collections.singletonMap(topic, filter))
        .setMessageListener(view -> {
          String id = view.getMessageId().toString();
          if (consumed.add(id)) {
            String body = StandardCharsets.UTF_8.decode(view.getBody()).toString();
            System.out.println("consumed " + id + " " + view.getTag().orElse("") + " " + body);
            done.countDown();
          }
          return ConsumeResult.SUCCESS;
        })
        .build()) {
      if (!done.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("consumed " + consumed.size() + " of " + count);
      }
    }
  }

  private static Producer producer(ClientServiceProvider provider, ClientConfiguration config, String topic)
      throws Exception {
    return provider.newProducerBuilder().setClientConfiguration(config).setTopics(topic).build();
  }

  private static void produceFifo(ClientServiceProvider provider, ClientConfiguration config, String topic,
      int count, String[] groups) throws Exception {
    try (Producer producer = producer(provider, config, topic)) {
      for (int i = 0; i < count; i++) {
        for (String group : groups) {
          Message message = provider.newMessageBuilder()
              .setTopic(topic)
              .setMessageGroup(group)
              .setBody((group + " " + i).getBytes(StandardCharsets.UTF_8))
              .build();
          System.out.println("sent " + producer.send(message).getMessageId() + " " + group + " " + i);
        }
      }
    }
  }

  private static void produceDelay(ClientServiceProvider provider, ClientConfiguration config, String topic,
      long delayMs) throws Exception {
    try (Producer producer = producer(provider, config, topic)) {
      long at = System.currentTimeMillis() + delayMs;
      Message message = provider.newMessageBuilder()
          .setTopic(topic)
          .setDeliveryTimestamp(at)
          .setBody("later".getBytes(StandardCharsets.UTF_8))
          .build();
      System.out.println("sent " + producer.send(message).getMessageId() + " " + at);
    }
  }

  private static void transaction(ClientServiceProvider provider, ClientConfiguration config, String topic,
      String end) throws Exception {
    // Its own check-backs go unanswered: this producer decides (or leaves) the transaction itself.
    try (Producer producer = provider.newProducerBuilder()
        .setClientConfiguration(config)
        .setTopics(topic)
        .setTransactionChecker(view -> TransactionResolution.UNKNOWN)
        .build()) {
      Transaction tx = producer.beginTransaction();
      Message message = provider.newMessageBuilder()
          .setTopic(topic)
          .setTag("tx")
          .setBody(("java " + end).getBytes(StandardCharsets.UTF_8))
          .build();
      SendReceipt receipt = producer.send(message, tx);
      System.out.println("sent " + receipt.getMessageId() + " " + ((SendReceiptImpl) receipt).getTransactionId());
      if (end.equals("commit")) tx.commit();
      else if (end.equals("rollback")) tx.rollback();
      else if (!end.equals("leave")) throw new IllegalArgumentException("commit, rollback or leave: " + end);
    }
  }

  private static void checkBack(ClientServiceProvider provider, ClientConfiguration config, String topic)
      throws Exception {
    try (Producer producer = provider.newProducerBuilder()
        .setClientConfiguration(config)
        .setTopics(topic)
        .setTransactionChecker(view -> {
          System.out.println("checked " + view.getMessageId());
          return TransactionResolution.COMMIT;
        })
        .build()) {
      System.out.println("ready");
      awaitStdinEnd();
    }
  }

  private static void deadLetter(ClientServiceProvider provider, ClientConfiguration config, String group,
      String topic) throws Exception {
    CountDownLatch stdinEnded = stdinEnd();
    try (SimpleConsumer consumer = provider.newSimpleConsumerBuilder()
        .setClientConfiguration(config)
        .setConsumerGroup(group)
        .setAwaitDuration(Duration.ofSeconds(2))
        .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL))
        .build()) {
      long deadline = System.currentTimeMillis() + 90_000;
      while (stdinEnded.getCount() > 0 && System.currentTimeMillis() < deadline) {
        for (MessageView view : consumer.receive(16, Duration.ofSeconds(60))) {
          String id = view.getMessageId().toString();
          System.out.println("received " + id + " " + view.getTag().orElse("") + " " + view.getDeliveryAttempt()
              + " " + StandardCharsets.UTF_8.decode(view.getBody()));
          consumer.changeInvisibleDuration(view, Duration.ofSeconds(1));
          System.out.println("changed " + id + " " + view.getDeliveryAttempt());
        }
      }
    }
  }

  /** A latch that opens when stdin ends: the test's signal that a run may stop. */
  private static CountDownLatch stdinEnd() {
    CountDownLatch ended = new CountDownLatch(1);
    Thread reader = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // The test writes nothing; it only closes stdin.
        }
      } catch (java.io.IOException ignored) {
        // A closed stdin ends the run too.
      }
      ended.countDown();
    });
    reader.setDaemon(true);
    reader.start();
    return ended;
  }

  private static void awaitStdinEnd() throws InterruptedException {
    if (!stdinEnd().await(90, TimeUnit.SECONDS)) throw new IllegalStateException("stdin never ended");
  }
}
