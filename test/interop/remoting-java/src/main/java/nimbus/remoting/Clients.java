package nimbus.remoting;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * The client set-up and waits the scenarios share: producers and consumers named {@code <prefix>-<pid>}, a push
 * consumer or lite pull consumer that takes each distinct message until it has {@code count} (60 s at most), a
 * watcher printing a snapshot each time it changes until stdin ends, and transaction listeners. A hook may be null
 * (unsigned: the same client as the constructor without one).
 */
final class Clients {
  private Clients() {}

  /** The instance name of a client of this process: {@code <prefix>-<pid>}. */
  static String instance(String prefix) {
    return prefix + "-" + ProcessHandle.current().pid();
  }

  private static <P extends DefaultMQProducer> P configure(P producer, String ns, String instancePrefix) {
    producer.setNamesrvAddr(ns);
    producer.setSendMsgTimeout(Interop.SEND_TIMEOUT_MS);
    producer.setInstanceName(instance(instancePrefix));
    return producer;
  }

  /** A producer (not started) with Interop's send timeout. */
  static DefaultMQProducer producer(String ns, String group, String instancePrefix) {
    return producer(ns, group, null, instancePrefix);
  }

  static DefaultMQProducer producer(String ns, String group, RPCHook hook, String instancePrefix) {
    return configure(new DefaultMQProducer(group, hook), ns, instancePrefix);
  }

  /** A transaction producer (not started, no listener yet) with Interop's send timeout. */
  static TransactionMQProducer txProducer(String ns, String group, String instancePrefix) {
    return configure(new TransactionMQProducer(group), ns, instancePrefix);
  }

  /** A listener whose local transaction answers {@code first} and whose checks answer what {@code check} says. */
  static TransactionListener transactions(LocalTransactionState first,
      Function<MessageExt, LocalTransactionState> check) {
    return new TransactionListener() {
      @Override
      public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
        return first;
      }

      @Override
      public LocalTransactionState checkLocalTransaction(MessageExt msg) {
        return check.apply(msg);
      }
    };
  }

  /** A clustering push consumer (not started, nothing subscribed) from the first offset. */
  static DefaultMQPushConsumer pushConsumer(String ns, String group, String instancePrefix) {
    return pushConsumer(ns, group, null, instancePrefix, MessageModel.CLUSTERING);
  }

  /** A push consumer (not started, nothing subscribed) of that model from the first offset. */
  static DefaultMQPushConsumer pushConsumer(String ns, String group, RPCHook hook, String instancePrefix,
      MessageModel model) {
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group, hook, new AllocateMessageQueueAveragely());
    consumer.setNamesrvAddr(ns);
    consumer.setInstanceName(instance(instancePrefix));
    consumer.setMessageModel(model);
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    return consumer;
  }

  /** A lite pull consumer (not started, nothing subscribed or assigned) from the first offset. */
  static DefaultLitePullConsumer liteConsumer(String ns, String group, RPCHook hook, String instancePrefix) {
    DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(group, hook);
    consumer.setNamesrvAddr(ns);
    consumer.setInstanceName(instance(instancePrefix));
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    return consumer;
  }

  /**
   * Starts the push consumer (subscribed, not started) with a listener that hands each distinct message (by id) to
   * {@code onNew} with its queue and answers CONSUME_SUCCESS; returns once {@code count} have come, or fails after
   * 60 s with {@code "<what> <seen> of <count>"}. The consumer is shut down either way.
   */
  static void consumeUntil(DefaultMQPushConsumer consumer, int count, String what,
      BiConsumer<MessageExt, MessageQueue> onNew) throws Exception {
    Set<String> seen = ConcurrentHashMap.newKeySet();
    CountDownLatch done = new CountDownLatch(1);
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
      for (MessageExt m : msgs) {
        if (seen.add(m.getMsgId())) onNew.accept(m, context.getMessageQueue());
      }
      if (seen.size() >= count) done.countDown();
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    consumer.start();
    try {
      if (!done.await(60, TimeUnit.SECONDS)) throw new IllegalStateException(what + " " + seen.size() + " of " + count);
    } finally {
      consumer.shutdown();
    }
  }

  /**
   * Polls the started lite consumer, handing each distinct message (by id) to {@code onNew}, until {@code count}
   * have come (returns how many) or 60 s have passed ({@code "pulled <seen> of <count>"}).
   */
  static int pollUntil(DefaultLitePullConsumer consumer, int count, Consumer<MessageExt> onNew) {
    Set<String> seen = ConcurrentHashMap.newKeySet();
    long deadline = System.currentTimeMillis() + 60_000;
    while (seen.size() < count) {
      if (System.currentTimeMillis() > deadline)
        throw new IllegalStateException("pulled " + seen.size() + " of " + count);
      for (MessageExt m : consumer.poll(1000)) {
        if (seen.add(m.getMsgId())) onNew.accept(m);
      }
    }
    return seen.size();
  }

  /** {@code <brokerName>/<queueId>}. */
  static String queueName(MessageQueue q) {
    return q.getBrokerName() + "/" + q.getQueueId();
  }

  /** The push consumer's queues of the topic whose process queue passes {@code held}, by name, sorted. */
  static TreeSet<String> queues(DefaultMQPushConsumer consumer, String topic, Predicate<ProcessQueue> held) {
    TreeSet<String> names = new TreeSet<>();
    Map<MessageQueue, ProcessQueue> table =
        consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable();
    for (Map.Entry<MessageQueue, ProcessQueue> e : table.entrySet()) {
      if (e.getKey().getTopic().equals(topic) && held.test(e.getValue())) names.add(queueName(e.getKey()));
    }
    return names;
  }

  /** Returns when stdin ends (the test closes it). */
  static void awaitStdinEnd() throws java.io.IOException {
    while (System.in.read() != -1) {
      // until the test closes stdin
    }
  }

  /**
   * Every 100 ms until stdin ends, prints {@code <prefix><snapshot>} when the snapshot differs from the last one
   * printed (first compared with ""): an empty snapshot prints as {@code -}, a null one is passed over.
   */
  static void watchUntilStdinCloses(Supplier<String> snapshot, String prefix) throws java.io.IOException {
    Thread watcher = new Thread(() -> {
      String last = "";
      while (!Thread.currentThread().isInterrupted()) {
        String now = snapshot.get();
        if (now != null && !now.equals(last)) {
          System.out.println(prefix + (now.isEmpty() ? "-" : now));
          last = now;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    watcher.setDaemon(true);
    watcher.start();
    awaitStdinEnd();
    watcher.interrupt();
  }
}
