package nimbus.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;

/**
 * One broker's phases with RocketMQ's gRPC client 5.0.8, the same for Apache RocketMQ and Nimbus:
 * {@code sync} (one thread, one send at a time), {@code async} (64 sends in flight), {@code consume} (a
 * SimpleConsumer receiving batches of 32 and acking each message (a batch's acks in flight together), until every
 * message the phases sent is acked;
 * its group is started before the first send). Each phase prints one line:
 * {@code RESULT <phase> <messages> <seconds> <p50 ms> <p99 ms> <errors> <first ms>} (PhaseReport).
 * With {@code -Dnimbus.bench.warmup=N},
 * each phase first runs N messages of its own shape unmeasured (the consume phase receives and acks its first N),
 * so that the client's JIT compiles that shape's code before the phase is timed, not during it.
 *
 * <pre>  GrpcBench &lt;endpoint&gt; &lt;topic&gt; &lt;group&gt; &lt;messages per phase&gt; &lt;body bytes&gt; &lt;phase&gt;...</pre>
 */
public final class GrpcBench {
  private GrpcBench() {}

  private static final int IN_FLIGHT = 64;

  public static void main(String[] args) throws Exception {
    String endpoint = args[0];
    String topic = args[1];
    String group = args[2];
    int messages = Integer.parseInt(args[3]);
    byte[] body = new byte[Integer.parseInt(args[4])];
    Arrays.fill(body, (byte) 'x');
    List<String> phases = Arrays.asList(Arrays.copyOfRange(args, 5, args.length));
    ClientServiceProvider provider = ClientServiceProvider.loadService();
    ClientConfiguration config = ClientConfiguration.newBuilder()
        .setEndpoints(endpoint)
        .setRequestTimeout(Duration.ofSeconds(10))
        .enableSsl(false)
        .build();
    SimpleConsumer consumer = phases.contains("consume")
        ? provider.newSimpleConsumerBuilder()
            .setClientConfiguration(config)
            .setConsumerGroup(group)
            .setAwaitDuration(Duration.ofSeconds(2))
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .build()
        : null;
    int sent = 0;
    try (Producer producer = provider.newProducerBuilder().setClientConfiguration(config).setTopics(topic).build()) {
      // Warm-up: route, Telemetry, connections; not measured, received by the consume phase too.
      for (int i = 0; i < 100; i++) producer.send(message(provider, topic, body));
      sent += 100;
      for (String phase : phases) {
        if (phase.equals("sync")) {
          if (Warmup.MESSAGES > 0) sync(provider, producer, topic, body, Warmup.MESSAGES);
          JitSettle.settle(phase);
          report(phase, sync(provider, producer, topic, body, messages));
          sent += Warmup.MESSAGES + messages;
        } else if (phase.equals("async")) {
          if (Warmup.MESSAGES > 0) async(provider, producer, topic, body, Warmup.MESSAGES);
          JitSettle.settle(phase);
          report(phase, async(provider, producer, topic, body, messages));
          sent += Warmup.MESSAGES + messages;
        }
      }
    }
    if (consumer != null) {
      Set<String> acked = new HashSet<>();
      int warmup = Warmup.beforeConsume(sent, messages);
      if (warmup > 0) consume(consumer, acked, warmup);
      int warmed = acked.size();
      JitSettle.settle("consume");
      Timed consumed = consume(consumer, acked, sent);
      report("consume", new Timed(acked.size() - warmed, consumed.nanos, consumed.latencies,
          consumed.errors + (sent - acked.size())));
      consumer.close();
    }
    System.exit(0);
  }

  private static Message message(ClientServiceProvider provider, String topic, byte[] body) {
    return provider.newMessageBuilder().setTopic(topic).setTag("bench").setBody(body).build();
  }

  /** A phase's count, duration, latencies and errors. */
  private record Timed(int messages, long nanos, long[] latencies, int errors) {}

  private static Timed sync(ClientServiceProvider provider, Producer producer, String topic, byte[] body, int n) {
    long[] latencies = new long[n];
    int errors = 0;
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      try {
        producer.send(message(provider, topic, body));
      } catch (Exception e) {
        errors++;
      }
      latencies[i] = System.nanoTime() - t;
    }
    return new Timed(n, System.nanoTime() - start, latencies, errors);
  }

  private static Timed async(ClientServiceProvider provider, Producer producer, String topic, byte[] body, int n)
      throws InterruptedException {
    Semaphore slots = new Semaphore(IN_FLIGHT);
    long[] latencies = new long[n];
    AtomicInteger errors = new AtomicInteger();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      slots.acquire();
      final int at = i;
      final long t = System.nanoTime();
      producer.sendAsync(message(provider, topic, body)).whenComplete((receipt, err) -> {
        latencies[at] = System.nanoTime() - t;
        if (err != null) errors.incrementAndGet();
        slots.release();
      });
    }
    slots.acquire(IN_FLIGHT);
    return new Timed(n, System.nanoTime() - start, latencies, errors.get());
  }

  /** Receives and acks until {@code acked} holds {@code expected} ids (or ten receives in a row are empty). */
  private static Timed consume(SimpleConsumer consumer, Set<String> acked, int expected) {
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    int errors = 0;
    int empty = 0;
    long start = System.nanoTime();
    while (acked.size() < expected && empty < 10) {
      long t = System.nanoTime();
      List<MessageView> got;
      try {
        got = consumer.receive(32, Duration.ofSeconds(30));
      } catch (Exception e) {
        errors++;
        continue;
      }
      latencies.add(System.nanoTime() - t);
      empty = got.isEmpty() ? empty + 1 : 0;
      // Each message acked on its own (as the client acks), the batch's acks in flight together.
      List<CompletableFuture<Void>> acks = new ArrayList<>();
      for (MessageView view : got) acks.add(consumer.ackAsync(view));
      for (int i = 0; i < acks.size(); i++) {
        try {
          acks.get(i).get();
          acked.add(got.get(i).getMessageId().toString());
        } catch (Exception e) {
          errors++;
        }
      }
    }
    long[] l = latencies.stream().mapToLong(Long::longValue).toArray();
    return new Timed(acked.size(), System.nanoTime() - start, l, errors);
  }

  private static void report(String phase, Timed t) {
    PhaseReport.print(phase, t.messages, t.nanos, t.latencies, t.errors);
  }

}
