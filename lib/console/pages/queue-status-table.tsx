/**
 * @module A topic's queues as the topic page and the dead-letter view show them: one row a queue (broker, queue,
 * min/max offset, last store time) with a link that browses its latest messages, and its write load once measured.
 */
import type { QueueStatus } from "../../protocol/index.js";
import { formatTime } from "../format.js";
import { href } from "../router.js";
import { TableBox } from "../widgets.js";
import { LoadCells, LoadHeaders } from "./queue-load.js";

/** What tells one queue table from another: its label, its rows' test id, its Browse links' accessible name. */
export interface QueueTableKind {
  label: string;
  testId: string;
  /** What the Browse link is called for a screen reader, before `broker/queue`. */
  browseLabel: string;
}

export function QueueStatusTable({
  topic,
  queues,
  kind,
}: {
  topic: string;
  queues: readonly QueueStatus[];
  kind: QueueTableKind;
}) {
  const measured = queues.some((q) => q.load !== undefined);
  return (
    <TableBox label={kind.label}>
      <thead>
        <tr>
          <th>Broker</th>
          <th>Queue</th>
          <th>Min offset</th>
          <th>Max offset</th>
          <th>Last store time (UTC)</th>
          <th>Messages</th>
          {measured && <LoadHeaders />}
        </tr>
      </thead>
      <tbody>
        {queues.map((q) => (
          <QueueStatusRow
            key={`${q.brokerName}:${q.queueId}`}
            topic={topic}
            queue={q}
            testId={kind.testId}
            browseLabel={kind.browseLabel}
            measured={measured}
          />
        ))}
      </tbody>
    </TableBox>
  );
}

function QueueStatusRow({
  topic,
  queue: q,
  testId,
  browseLabel,
  measured,
}: {
  topic: string;
  queue: QueueStatus;
  testId: string;
  browseLabel: string;
  measured: boolean;
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
      {measured && <LoadCells load={q.load} />}
    </tr>
  );
}
