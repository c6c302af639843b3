package nimbus.remoting;

import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The live consumer mqadmin's tests talk to (test/remoting/mqadmin.test.ts): a clustering DefaultMQPushConsumer
 * from the first offset that commits its offsets every second and stays until its stdin ends, so that
 * consumerStatus can ask it for its running info and resetOffsetByTime can move it. It prints
 * {@code client <clientId>} once started, then {@code delivery <msgId> <brokerName> <queueId> <queueOffset> <body>}
 * for every delivery (a message delivered again after an offset reset is printed again).
 */
final class AdminScenarios {
  private AdminScenarios() {}

  static void live(String ns, String group, String topic) throws Exception {
    DefaultMQPushConsumer consumer = Clients.pushConsumer(ns, group, "live");
    consumer.setPersistConsumerOffsetInterval(1000);
    consumer.subscribe(topic, "*");
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
      for (MessageExt m : msgs) {
        synchronized (Interop.class) {
          System.out.println("delivery " + m.getMsgId() + " " + context.getMessageQueue().getBrokerName() + " "
              + m.getQueueId() + " " + m.getQueueOffset() + " "
              + new String(m.getBody(), StandardCharsets.UTF_8).replace(' ', '_'));
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    consumer.start();
    synchronized (Interop.class) {
      System.out.println("client " + consumer.buildMQClientId());
    }
    Clients.awaitStdinEnd();
    consumer.shutdown();
  }
}
