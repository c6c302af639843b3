package nimbus.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;

/**
 * RocketMQ's Java client against a Nimbus gRPC endpoint, one scenario per run. Each line on stdout is one
 * result: {@code sent <messageId>} or {@code received <messageId> <tag> <body>}; a failure exits non-zero.
 *
 * <pre>
 *   produce &lt;endpoint&gt; &lt;topic&gt; &lt;count&gt; [tag]
 *   consume &lt;endpoint&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt; [tag expression]
 * </pre>
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
      List<String> seen = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 60_000;
      while (seen.size() < count && System.currentTimeMillis() < deadline) {
        for (MessageView view : consumer.receive(16, Duration.ofSeconds(30))) {
          consumer.ack(view);
          String id = view.getMessageId().toString();
          seen.add(id);
          String body = StandardCharsets.UTF_8.decode(view.getBody()).toString();
          System.out.println("received " + id + " " + view.getTag().orElse("") + " " + body);
        }
      }
      if (seen.size() < count) throw new IllegalStateException("received " + seen.size() + " of " + count);
    }
  }
}
