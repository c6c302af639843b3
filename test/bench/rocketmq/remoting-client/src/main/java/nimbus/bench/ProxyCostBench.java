package nimbus.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The proxy-cost bench's remoting client (test/bench/proxy-cost-remoting.ts): RocketMQ's classic client 4.9.8
 * through {@code nimbus proxy --remoting-port}, phase by phase, each started by a line on stdin so the caller can
 * count the storage requests of that phase alone: it prints {@code READY <phase>}, waits for a line, runs the
 * phase and prints {@code RESULT <phase> <messages> <seconds> <p50 ms> <p99 ms> <errors> <first ms>} (PhaseReport).
 * Phases: {@code sync}
 * (one send at a time), {@code async} (up to {@code inFlight} sends at once, one producer), {@code consume} (a
 * clustering DefaultMQPushConsumer from the first offset until every message sent, warm-up included, arrived).
 *
 * <pre>  ProxyCostBench &lt;namesrv&gt; &lt;topic&gt; &lt;group&gt; &lt;seconds per send phase&gt; &lt;body bytes&gt; &lt;in flight&gt;</pre>
 */
public final class ProxyCostBench {
  private ProxyCostBench() {}

  private static final BufferedReader IN =
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

  public static void main(String[] args) throws Exception {
    String namesrv = args[0];
    String topic = args[1];
    String group = args[2];
    long nanos = TimeUnit.SECONDS.toNanos(Long.parseLong(args[3]));
    byte[] body = new byte[Integer.parseInt(args[4])];
    Arrays.fill(body, (byte) 'x');
    int inFlight = Integer.parseInt(args[5]);
    DefaultMQProducer producer = new DefaultMQProducer(group + "_producer");
    producer.setNamesrvAddr(namesrv);
    producer.setSendMsgTimeout(10_000);
    producer.start();
    // Warm-up: routes and connections to every broker; not measured, consumed by the consume phase too.
    int sent = 0;
    for (int i = 0; i < 16; i++, sent++) producer.send(new Message(topic, "bench", body));
    sent += sync(producer, topic, body, nanos);
    sent += async(producer, topic, body, nanos, inFlight);
    producer.shutdown();
    consume(namesrv, topic, group, sent);
    System.exit(0);
  }

  private static void ready(String phase) throws Exception {
    System.out.println("READY " + phase);
    System.out.flush();
    IN.readLine();
  }

  private static int sync(DefaultMQProducer producer, String topic, byte[] body, long nanos) throws Exception {
    ready("sync");
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    int errors = 0;
    long start = System.nanoTime();
    while (System.nanoTime() - start < nanos) {
      long t = System.nanoTime();
      try {
        producer.send(new Message(topic, "bench", body));
        latencies.add(System.nanoTime() - t);
      } catch (Exception e) {
        errors++;
      }
    }
    report("sync", latencies.size(), System.nanoTime() - start, latencies, errors);
    return latencies.size();
  }

  private static int async(DefaultMQProducer producer, String topic, byte[] body, long nanos, int inFlight)
      throws Exception {
    ready("async");
    Semaphore slots = new Semaphore(inFlight);
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    AtomicInteger errors = new AtomicInteger();
    long start = System.nanoTime();
    while (System.nanoTime() - start < nanos) {
      slots.acquire();
      final long t = System.nanoTime();
      producer.send(new Message(topic, "bench", body), new SendCallback() {
        @Override
        public void onSuccess(SendResult result) {
          latencies.add(System.nanoTime() - t);
          slots.release();
        }

        @Override
        public void onException(Throwable e) {
          errors.incrementAndGet();
          slots.release();
        }
      });
    }
    slots.acquire(inFlight);
    report("async", latencies.size(), System.nanoTime() - start, latencies, errors.get());
    return latencies.size();
  }

  private static void consume(String namesrv, String topic, String group, int expected) throws Exception {
    ready("consume");
    Set<String> seen = ConcurrentHashMap.newKeySet();
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    DefaultMQPushConsumer consumer = RemotingBench.pushFromFirst(namesrv, group, topic);
    long start = System.nanoTime();
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
      for (MessageExt m : msgs) if (seen.add(m.getMsgId())) latencies.add(System.nanoTime() - start);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    consumer.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
    while (seen.size() < expected && System.nanoTime() < deadline) Thread.sleep(20);
    long nanos = System.nanoTime() - start;
    report("consume", seen.size(), nanos, latencies, expected - seen.size());
    consumer.shutdown();
  }

  private static void report(String phase, int n, long nanos, ConcurrentLinkedQueue<Long> latencies, int errors) {
    PhaseReport.print(phase, n, nanos, latencies.stream().mapToLong(Long::longValue).toArray(), errors);
  }
}
