package nimbus.remoting;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

/** The scenarios of Interop beyond sends and reads: view and query, transactions, retry then DLQ. */
final class Scenarios {
  private Scenarios() {}

  private static void printViewed(String how, MessageExt m) {
    System.out.println("viewed " + how + " " + m.getMsgId() + " " + m.getTopic() + " " + m.getKeys() + " "
        + new String(m.getBody(), StandardCharsets.UTF_8).replace(' ', '_'));
  }

  static void query(String ns, String topic) throws Exception {
    DefaultMQProducer producer = Clients.producer(ns, "nimbus-remoting-query", "q");
    producer.start();
    try {
      List<SendResult> sent = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        SendResult r = producer.send(Interop.message(topic, "TagQ", i));
        sent.add(r);
        System.out.println("sent " + r.getMsgId() + " " + r.getOffsetMsgId());
      }
      for (SendResult r : sent) {
        // viewMessage(topic, offsetMsgId) asks VIEW_MESSAGE_BY_ID first on 4.x and 5.x (5.x has no one-argument form).
        printViewed("offset", producer.viewMessage(topic, r.getOffsetMsgId()));
        printViewed("id", producer.viewMessage(topic, r.getMsgId()));
      }
      QueryResult q = producer.queryMessage(topic, "k-0", 32, 0, Long.MAX_VALUE);
      StringBuilder line = new StringBuilder("queried k-0");
      for (MessageExt m : q.getMessageList()) line.append(' ').append(m.getMsgId());
      System.out.println(line);
    } finally {
      producer.shutdown();
    }
  }

  static void transaction(String ns, String group, String topic, String how) throws Exception {
    TransactionMQProducer producer = Clients.txProducer(ns, group, "t");
    AtomicInteger checks = new AtomicInteger();
    CountDownLatch committed = new CountDownLatch(1);
    LocalTransactionState first = switch (how) {
      case "commit" -> LocalTransactionState.COMMIT_MESSAGE;
      case "rollback" -> LocalTransactionState.ROLLBACK_MESSAGE;
      default -> LocalTransactionState.UNKNOW;
    };
    producer.setTransactionListener(Clients.transactions(first, msg -> {
      int n = checks.incrementAndGet();
      LocalTransactionState state = n == 1 ? LocalTransactionState.UNKNOW : LocalTransactionState.COMMIT_MESSAGE;
      synchronized (Scenarios.class) {
        System.out.println("checked " + n + " " + state + " " + msg.getTransactionId());
      }
      if (state == LocalTransactionState.COMMIT_MESSAGE) committed.countDown();
      return state;
    }));
    producer.start();
    try {
      Message m = new Message(topic, "TagT", "tx-key", ("transaction " + how).getBytes(StandardCharsets.UTF_8));
      SendResult r = producer.sendMessageInTransaction(m, null);
      synchronized (Scenarios.class) {
        System.out.println("sent " + r.getMsgId() + " " + r.getTransactionId() + " " + r.getSendStatus());
      }
      if (how.equals("check") && !committed.await(90, TimeUnit.SECONDS))
        throw new IllegalStateException("checked " + checks.get() + " times, never committed");
      // The check's answer is a oneway END_TRANSACTION from the check executor: let it go out before shutdown.
      Thread.sleep(how.equals("check") ? 1000 : 0);
    } finally {
      producer.shutdown();
    }
  }

  static void retryDlq(String ns, String group, String topic) throws Exception {
    DefaultMQProducer producer = Clients.producer(ns, "nimbus-remoting-retry", "r");
    producer.start();
    SendResult sent;
    try {
      sent = producer.send(Interop.message(topic, "TagD", 0));
      System.out.println("sent " + sent.getMsgId());
    } finally {
      producer.shutdown();
    }
    DefaultMQPushConsumer consumer = Clients.pushConsumer(ns, group, "d");
    consumer.setMaxReconsumeTimes(1);
    // Shutdown waits for the consume task that sends the last delivery back.
    consumer.setAwaitTerminationMillisWhenShutdown(30_000);
    consumer.subscribe(topic, "*");
    CountDownLatch twice = new CountDownLatch(2);
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
      for (MessageExt m : msgs) {
        synchronized (Scenarios.class) {
          System.out.println("delivery " + m.getMsgId() + " " + m.getReconsumeTimes() + " " + m.getTopic());
        }
        if (m.getMsgId().equals(sent.getMsgId())) twice.countDown();
      }
      return ConsumeConcurrentlyStatus.RECONSUME_LATER;
    });
    consumer.start();
    try {
      if (!twice.await(90, TimeUnit.SECONDS)) throw new IllegalStateException("not delivered twice");
    } finally {
      consumer.shutdown();
    }
  }

  static void member(String ns, String group, String topic) throws Exception {
    // Read once when the rebalance service's class loads: before the consumer exists.
    System.setProperty("rocketmq.client.rebalance.waitInterval", "3600000");
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
    consumer.setNamesrvAddr(ns);
    consumer.setInstanceName(Clients.instance("m"));
    consumer.setMessageModel(MessageModel.CLUSTERING);
    consumer.subscribe(topic, "*");
    consumer.registerMessageListener(
        (MessageListenerConcurrently) (msgs, context) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
    consumer.start();
    Clients.watchUntilStdinCloses(() -> {
      Set<String> held = Clients.queues(consumer, topic, q -> true);
      return held.isEmpty() ? null : String.join(",", held);
    }, "queues ");
    consumer.shutdown();
  }
}
