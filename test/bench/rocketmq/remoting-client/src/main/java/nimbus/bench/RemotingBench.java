package nimbus.bench;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * One broker's phases with RocketMQ's classic remoting client 4.9.8, the same for Apache RocketMQ and Nimbus:
 * {@code sync} (one thread, one send at a time), {@code async} (64 sends in flight), {@code consume} (a clustering
 * DefaultMQPushConsumer from the first offset until every message the phases sent arrived; latency is store to
 * consume). Each phase prints
 * {@code RESULT <phase> <messages> <seconds> <p50 ms> <p99 ms> <errors> <first ms>} (PhaseReport).
 * With
 * {@code -Dnimbus.bench.warmup=N}, each phase first runs N messages of its own shape unmeasured (the consume phase's
 * warm-up is a second group reading every message the phases sent, Warmup.beforePushConsume), so that the client's
 * JIT compiles that shape's code before the phase is timed, not during it.
 *
 * <pre>  RemotingBench &lt;namesrv&gt; &lt;topic&gt; &lt;group&gt; &lt;messages per phase&gt; &lt;body bytes&gt; &lt;phase&gt;...</pre>
 */
public final class RemotingBench {
  private RemotingBench() {}

  private static final int IN_FLIGHT = 64;

  public static void main(String[] args) throws Exception {
    String namesrv = args[0];
    String topic = args[1];
    String group = args[2];
    int messages = Integer.parseInt(args[3]);
    byte[] body = new byte[Integer.parseInt(args[4])];
    Arrays.fill(body, (byte) 'x');
    java.util.List<String> phases = Arrays.asList(Arrays.copyOfRange(args, 5, args.length));
    DefaultMQProducer producer = new DefaultMQProducer(group + "_producer");
    producer.setNamesrvAddr(namesrv);
    producer.setSendMsgTimeout(10_000);
    producer.start();
    int sent = 0;
    // Warm-up: routes, connections; not measured, consumed by the consume phase too.
    for (int i = 0; i < 100; i++) producer.send(new Message(topic, "bench", body));
    sent += 100;
    for (String phase : phases) {
      if (phase.equals("sync")) {
        if (Warmup.MESSAGES > 0) sync(producer, topic, body, Warmup.MESSAGES, false);
        JitSettle.settle(phase);
        sync(producer, topic, body, messages, true);
        sent += Warmup.MESSAGES + messages;
      } else if (phase.equals("async")) {
        if (Warmup.MESSAGES > 0) async(producer, topic, body, Warmup.MESSAGES, false);
        JitSettle.settle(phase);
        async(producer, topic, body, messages, true);
        sent += Warmup.MESSAGES + messages;
      }
    }
    producer.shutdown();
    if (phases.contains("consume")) {
      int warmup = Warmup.beforePushConsume(sent);
      if (warmup > 0) consume(namesrv, topic, group + "_warmup", warmup, false);
      JitSettle.settle("consume");
      consume(namesrv, topic, group, sent, true);
    }
    System.exit(0);
  }

  private static void sync(DefaultMQProducer producer, String topic, byte[] body, int n, boolean measured) {
    long[] latencies = new long[n];
    int errors = 0;
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      try {
        producer.send(new Message(topic, "bench", body));
      } catch (Exception e) {
        errors++;
      }
      latencies[i] = System.nanoTime() - t;
    }
    if (measured) PhaseReport.print("sync", n, System.nanoTime() - start, latencies, errors);
  }

  private static void async(DefaultMQProducer producer, String topic, byte[] body, int n, boolean measured)
      throws Exception {
    Semaphore slots = new Semaphore(IN_FLIGHT);
    long[] latencies = new long[n];
    AtomicInteger errors = new AtomicInteger();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      slots.acquire();
      final int at = i;
      final long t = System.nanoTime();
      producer.send(new Message(topic, "bench", body), new SendCallback() {
        @Override
        public void onSuccess(SendResult result) {
          latencies[at] = System.nanoTime() - t;
          slots.release();
        }

        @Override
        public void onException(Throwable e) {
          latencies[at] = System.nanoTime() - t;
          errors.incrementAndGet();
          slots.release();
        }
      });
    }
    slots.acquire(IN_FLIGHT);
    if (measured) PhaseReport.print("async", n, System.nanoTime() - start, latencies, errors.get());
  }

  /** A clustering push consumer of every message of the topic from the first offset, pulling 32 at a time. */
  static DefaultMQPushConsumer pushFromFirst(String namesrv, String group, String topic) throws Exception {
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
    consumer.setNamesrvAddr(namesrv);
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setPullBatchSize(32);
    consumer.subscribe(topic, "*");
    return consumer;
  }

  /** Consumes with {@code group} until it has seen {@code expected} messages (or none came for 60 s). */
  private static void consume(String namesrv, String topic, String group, int expected, boolean measured)
      throws Exception {
    Set<String> seen = ConcurrentHashMap.newKeySet();
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    DefaultMQPushConsumer consumer = pushFromFirst(namesrv, group, topic);
    long start = System.nanoTime();
    // When the first message reached the listener: the consumer's start-up (rebalance, offsets) comes before it.
    AtomicLong first = new AtomicLong(-1);
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
      first.compareAndSet(-1, System.nanoTime() - start);
      long now = System.currentTimeMillis();
      for (MessageExt m : msgs) {
        if (seen.add(m.getMsgId())) latencies.add((now - m.getStoreTimestamp()) * 1_000_000L);
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    consumer.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
    int last = -1;
    long stalledSince = System.nanoTime();
    while (seen.size() < expected && System.nanoTime() < deadline) {
      Thread.sleep(20);
      if (seen.size() != last) {
        last = seen.size();
        stalledSince = System.nanoTime();
      } else if (System.nanoTime() - stalledSince > TimeUnit.SECONDS.toNanos(60)) {
        break;
      }
    }
    long nanos = System.nanoTime() - start;
    consumer.shutdown();
    long[] l = latencies.stream().mapToLong(Long::longValue).toArray();
    if (measured) PhaseReport.print("consume", seen.size(), nanos, l, expected - seen.size(), first.get());
  }
}
