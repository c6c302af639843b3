package nimbus.spring;

import com.alibaba.fastjson.JSON;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.apache.rocketmq.spring.core.RocketMQPushConsumerLifecycleListener;
import org.springframework.stereotype.Component;

/**
 * The application's {@code @RocketMQMessageListener}: a clustering push consumer of {@code nimbus.topic} in group
 * {@code nimbus.group}, from the first offset (a new group on Nimbus starts where its consumeFromWhere says). It
 * keeps one line per distinct message id: the message as the client read it.
 */
@Component
@RocketMQMessageListener(topic = "${nimbus.topic}", consumerGroup = "${nimbus.group}")
public class Listener implements RocketMQListener<MessageExt>, RocketMQPushConsumerLifecycleListener {
  private final Map<String, String> seen = new LinkedHashMap<>();

  @Override
  public void prepareStart(DefaultMQPushConsumer consumer) {
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
  }

  @Override
  public void onMessage(MessageExt m) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("msgId", m.getMsgId());
    out.put("topic", m.getTopic());
    out.put("tags", m.getTags());
    out.put("keys", m.getKeys());
    out.put("body", new String(m.getBody(), StandardCharsets.UTF_8));
    out.put("brokerName", m.getBrokerName());
    out.put("queueId", m.getQueueId());
    out.put("queueOffset", m.getQueueOffset());
    out.put("bornTimestamp", m.getBornTimestamp());
    out.put("storeTimestamp", m.getStoreTimestamp());
    out.put("reconsumeTimes", m.getReconsumeTimes());
    out.put("flag", m.getFlag());
    out.put("properties", m.getProperties());
    synchronized (this) {
      seen.putIfAbsent(m.getMsgId(), "msg " + JSON.toJSONString(out));
      notifyAll();
    }
  }

  /** Waits until {@code count} distinct messages came, at most the given time. */
  synchronized boolean received(int count, long time, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + unit.toNanos(time);
    while (seen.size() < count) {
      long left = deadline - System.nanoTime();
      if (left <= 0) return false;
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  synchronized List<String> lines() {
    return new ArrayList<>(seen.values());
  }
}
