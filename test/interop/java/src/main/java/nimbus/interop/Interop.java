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

/**
 * RocketMQ's Java client against a Nimbus gRPC endpoint, one scenario per run. Each line on stdout is one
 * result: {@code sent <messageId>}, {@code received <messageId> <tag> <deliveryAttempt> <body>},
 * {@code acked <messageId>} or {@code consumed <messageId> <tag> <body>}; a failure exits non-zero.
 *
 * <pre>
 *   produce &lt;endpoint&gt; &lt;topic&gt; &lt;count&gt; [tag]
 *   consume &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt; [tag expression]
 *   push    &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt; [tag expression]
 * </pre>
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
    } else if (mode.equals("consume")) {
      consume(provider, config, args[2], args[3], Integer.parseInt(args[4]), args.length > 5 ? args[5] : "*");
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
}
