package nimbus.spring;

import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.spring.core.RocketMQTemplate;
import org.apache.rocketmq.spring.support.RocketMQHeaders;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.messaging.Message;
import org.springframework.messaging.support.MessageBuilder;

/**
 * A tiny Spring Boot application on rocketmq-spring-boot-starter (RocketMQ's classic remoting client underneath)
 * against Nimbus' remoting door. Run with Spring's own arguments:
 *
 * <pre>
 *   --rocketmq.name-server=&lt;namesrv&gt; --nimbus.topic=&lt;topic&gt; --nimbus.group=&lt;group&gt;
 *   --nimbus.count=&lt;n&gt; --nimbus.tag=&lt;tag&gt;
 * </pre>
 *
 * Its {@link Listener} ({@code @RocketMQMessageListener} on the topic, consumer group {@code nimbus.group}) starts
 * with the context; then {@code RocketMQTemplate.syncSend} sends {@code n} messages to {@code topic:tag}, body
 * {@code spring <i>}, header {@code KEYS} {@code sk-<i>} and a header {@code p=<i>} (a user property), printing
 * {@code sent <msgId> <offsetMsgId> <brokerName> <queueId> <queueOffset>} for each; it ends once the listener has
 * received {@code n} distinct messages, printing {@code msg <json>} for each (at most 60 s, else it fails).
 */
@SpringBootApplication
public class App implements CommandLineRunner {
  private final RocketMQTemplate template;
  private final Listener listener;
  private final String topic;
  private final String tag;
  private final int count;

  public App(RocketMQTemplate template, Listener listener, @Value("${nimbus.topic}") String topic,
      @Value("${nimbus.tag}") String tag, @Value("${nimbus.count}") int count) {
    this.template = template;
    this.listener = listener;
    this.topic = topic;
    this.tag = tag;
    this.count = count;
  }

  public static void main(String[] args) {
    System.exit(SpringApplication.exit(SpringApplication.run(App.class, args)));
  }

  @Override
  public void run(String... args) throws Exception {
    for (int i = 0; i < count; i++) {
      Message<String> message = MessageBuilder.withPayload("spring " + i)
          .setHeader(RocketMQHeaders.KEYS, "sk-" + i)
          .setHeader("p", String.valueOf(i))
          .build();
      SendResult r = template.syncSend(topic + ":" + tag, message);
      MessageQueue q = r.getMessageQueue();
      System.out.println("sent " + r.getMsgId() + " " + r.getOffsetMsgId() + " " + q.getBrokerName() + " "
          + q.getQueueId() + " " + r.getQueueOffset());
    }
    if (!listener.received(count, 60, TimeUnit.SECONDS))
      throw new IllegalStateException("received " + listener.lines().size() + " of " + count);
    for (String line : listener.lines()) System.out.println(line);
  }
}
