/**
 * @module One queue of a topic's status (broker, queue, min/max offset, last store time) with a link that browses
 * its latest messages: the topics page and the dead-letter view show the same row.
 */
import type { QueueStatus } from "../../protocol/index.js";
import { formatTime } from "../format.js";
import { href } from "../router.js";

export function QueueStatusRow({
  topic,
  queue: q,
  testId,
  browseLabel,
}: {
  topic: string;
  queue: QueueStatus;
  testId: string;
  /** What the Browse link is called for a screen reader, before `broker/queue`. */
  browseLabel: string;
}) {
  return (
    <tr data-testid={testId}>
      <td>{q.brokerName}</td>
      <td>{q.queueId}</td>
      <td>{q.minOffset}</td>
      <td>{q.maxOffset}</td>
      <td>{formatTime(q.lastUpdateTimestamp)}</td>
      <td>
        <a
          aria-label={`${browseLabel} ${q.brokerName}/${q.queueId}`}
          href={href(["messages"], {
            topic,
            broker: q.brokerName,
            queue: q.queueId,
            from: Math.max(q.minOffset, q.maxOffset - 20),
          })}
        >
          Browse
        </a>
      </td>
    </tr>
  );
}
