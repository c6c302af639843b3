package nimbus.remoting;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * Signed (rocketmq-acl's AclClientRPCHook) and TLS scenarios of test/remoting/acl.test.ts. The access key "-" means
 * no hook (unsigned). A refusal is a result, not a failure: the program prints it and exits 0.
 *
 * <pre>
 *   acl-produce &lt;namesrv&gt; &lt;accessKey&gt; &lt;secretKey&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;
 *   acl-push    &lt;namesrv&gt; &lt;accessKey&gt; &lt;secretKey&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;
 *   acl-lite    &lt;namesrv&gt; &lt;accessKey&gt; &lt;secretKey&gt; &lt;group&gt; &lt;topic&gt; &lt;count&gt;
 *   acl-query   &lt;namesrv&gt; &lt;accessKey&gt; &lt;secretKey&gt; &lt;group&gt; &lt;topic&gt;
 *   tls         &lt;trusted certificate PEM file&gt; &lt;one of the above, with its arguments&gt;
 * </pre>
 *
 * {@code acl-produce} first asks the name server for the topic's route itself ({@code route ok} or
 * {@code route <responseCode>}), then sends {@code count} messages: {@code sent <msgId>} each, or
 * {@code failed <responseCode> <message>} at the first refusal. {@code acl-push} (clustering, from the first
 * offset) and {@code acl-lite} (subscribed, auto-commit) print {@code msg <msgId> <body>} per distinct message and
 * end once they have {@code count}. {@code tls} turns on the client's TLS (tls.enable) trusting only the given
 * certificate (tls.client.authServer, tls.client.trustCertPath; not the test mode, which trusts anything).
 * {@code acl-query} sends one message (key k-0), then views it by offset message id and by message id and queries
 * key k-0: {@code sent <msgId> <offsetMsgId>}, {@code viewed offset|id <msgId>} and {@code queried <msgId>...}, or
 * {@code failed <how> <code>}.
 */
final class AclScenarios {
  private AclScenarios() {}

  static void run(String[] args) throws Exception {
    switch (args[0]) {
      case "tls" -> {
        // Read once, when the client's TLS classes load: set before any client is made.
        System.setProperty("tls.enable", "true");
        System.setProperty("tls.test.mode.enable", "false");
        System.setProperty("tls.client.authServer", "true");
        System.setProperty("tls.client.trustCertPath", args[1]);
        String[] rest = new String[args.length - 2];
        System.arraycopy(args, 2, rest, 0, rest.length);
        run(rest);
      }
      case "acl-produce" -> produce(args[1], hook(args[2], args[3]), args[4], args[5], Integer.parseInt(args[6]));
      case "acl-push" -> push(args[1], hook(args[2], args[3]), args[4], args[5], Integer.parseInt(args[6]));
      case "acl-lite" -> lite(args[1], hook(args[2], args[3]), args[4], args[5], Integer.parseInt(args[6]));
      case "acl-query" -> query(args[1], hook(args[2], args[3]), args[4], args[5]);
      default -> throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }

  private static RPCHook hook(String accessKey, String secretKey) {
    return "-".equals(accessKey) ? null : new AclClientRPCHook(new SessionCredentials(accessKey, secretKey));
  }

  private static String firstLine(Throwable e) {
    String m = String.valueOf(e.getMessage());
    int nl = m.indexOf('\n');
    return (nl < 0 ? m : m.substring(0, nl)).replace(' ', '_');
  }

  private static void produce(String ns, RPCHook hook, String group, String topic, int count) throws Exception {
    // Interop's send timeout is a guard, not a speed rule: a cold JVM's first TLS handshakes on a busy machine take
    // seconds.
    DefaultMQProducer producer = Clients.producer(ns, group, hook, "ap");
    producer.setRetryTimesWhenSendFailed(0);
    producer.start();
    try {
      try {
        producer.getDefaultMQProducerImpl().getmQClientFactory().getMQClientAPIImpl()
            .getTopicRouteInfoFromNameServer(topic, 10_000);
        System.out.println("route ok");
      } catch (MQClientException e) {
        System.out.println("route " + e.getResponseCode() + " " + firstLine(e));
      }
      for (int i = 0; i < count; i++) {
        Message m = new Message(topic, "TagA", "k-" + i, ("acl " + i).getBytes(StandardCharsets.UTF_8));
        try {
          SendResult r = producer.send(m);
          System.out.println("sent " + r.getMsgId());
        } catch (MQBrokerException e) {
          System.out.println("failed " + e.getResponseCode() + " " + firstLine(e));
          return;
        } catch (MQClientException e) {
          System.out.println("failed " + e.getResponseCode() + " " + firstLine(e));
          return;
        }
      }
    } finally {
      producer.shutdown();
    }
  }

  private static void query(String ns, RPCHook hook, String group, String topic) throws Exception {
    DefaultMQProducer producer = Clients.producer(ns, group, hook, "aq");
    producer.start();
    try {
      SendResult r = producer.send(new Message(topic, "TagQ", "k-0", "query".getBytes(StandardCharsets.UTF_8)));
      System.out.println("sent " + r.getMsgId() + " " + r.getOffsetMsgId());
      try {
        // viewMessage(topic, offsetMsgId) asks VIEW_MESSAGE_BY_ID first on 4.x and 5.x (5.x has no one-argument form).
        System.out.println("viewed offset " + producer.viewMessage(topic, r.getOffsetMsgId()).getMsgId());
      } catch (MQBrokerException | MQClientException e) {
        System.out.println("failed offset " + code(e));
      }
      try {
        System.out.println("viewed id " + producer.viewMessage(topic, r.getMsgId()).getMsgId());
      } catch (MQBrokerException | MQClientException e) {
        System.out.println("failed id " + code(e));
      }
      try {
        StringBuilder line = new StringBuilder("queried");
        for (MessageExt m : producer.queryMessage(topic, "k-0", 32, 0, Long.MAX_VALUE).getMessageList())
          line.append(' ').append(m.getMsgId());
        System.out.println(line);
      } catch (MQClientException e) {
        System.out.println("failed key " + code(e));
      }
    } finally {
      producer.shutdown();
    }
  }

  private static int code(Exception e) {
    return e instanceof MQBrokerException b ? b.getResponseCode() : ((MQClientException) e).getResponseCode();
  }

  private static void printMessage(MessageExt m) {
    synchronized (AclScenarios.class) {
      System.out.println("msg " + m.getMsgId() + " "
          + new String(m.getBody(), StandardCharsets.UTF_8).replace(' ', '_'));
    }
  }

  private static void push(String ns, RPCHook hook, String group, String topic, int count) throws Exception {
    DefaultMQPushConsumer consumer = Clients.pushConsumer(ns, group, hook, "ac", MessageModel.CLUSTERING);
    consumer.subscribe(topic, "*");
    Clients.consumeUntil(consumer, count, "consumed", (m, q) -> printMessage(m));
  }

  private static void lite(String ns, RPCHook hook, String group, String topic, int count) throws Exception {
    DefaultLitePullConsumer consumer = Clients.liteConsumer(ns, group, hook, "al");
    consumer.setAutoCommit(true);
    consumer.subscribe(topic, "*");
    consumer.start();
    try {
      Clients.pollUntil(consumer, count, AclScenarios::printMessage);
      consumer.commitSync();
      Collection<MessageQueue> assigned = consumer.fetchMessageQueues(topic);
      System.out.println("queues " + assigned.size());
    } finally {
      consumer.shutdown();
    }
  }
}
