/**
 * @module The consumer's side of retries (RocketMQ's `sendMessageBack` and `resetRetryAndNamespace`): a
 * failed message is handed back to the broker by its stored coordinates, and a message read from the
 * group's retry topic is shown to the listener under its original topic (`RETRY_TOPIC`), with the queue
 * and offset of the retry queue it was read from (what its offset commits).
 *
 * @example
 * const sendBack = sendBackTo(api, "orders-group", 16);
 * await sendBack(msg, mq); // into %RETRY%orders-group (or %DLQ%orders-group after 16 reconsumes)
 */
import { MessageConst } from "../../core/message.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { retryTopic } from "../../core/names.js";
import { type MessageExt, toMessageExt } from "../message.js";
import type { NimbusApi, SendBackResponse } from "../transport/index.js";

/** A send-back function for `group`: the message at `mq` and its offset goes to the retry topic or the DLQ. */
export function sendBackTo(api: NimbusApi, group: string, maxReconsumeTimes: number | undefined) {
  return async (msg: MessageExt, mq: MessageQueue, delayLevel = 0): Promise<SendBackResponse> =>
    api.sendBack({
      consumerGroup: group,
      topic: mq.topic,
      brokerName: mq.brokerName,
      queueId: mq.queueId,
      queueOffset: msg.queueOffset,
      delayLevel,
      // Unset: the broker applies the group's retryMaxTimes.
      ...(maxReconsumeTimes === undefined ? {} : { maxReconsumeTimes }),
    });
}

/** Messages from `%RETRY%<group>` under their original topic (RocketMQ's resetRetryAndNamespace). */
export function restoreRetryTopic(msgs: MessageExt[], group: string): MessageExt[] {
  const retry = retryTopic(group);
  return msgs.map((m) => {
    const original = m.properties[MessageConst.RETRY_TOPIC];
    if (m.topic !== retry || original === undefined) return m;
    return toMessageExt({ ...m, topic: original });
  });
}
