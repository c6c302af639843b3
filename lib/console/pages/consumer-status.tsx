/**
 * @module What each live member of a consumer group works on (`consumerStatus`, from its last heartbeat):
 * assigned queues, locks, cached messages, last pull and consume times, and whether its subscription is the
 * group's.
 */
import type { Answer } from "../api.js";
import { formatAge, formatTime } from "../format.js";
import { TableBox } from "../widgets.js";

type Status = Answer<"consumerStatus">["consumers"][number];

export function ConsumerStatusTable({ consumers, now }: { consumers: Status[]; now: number }) {
  if (consumers.length === 0) return <p>No live consumer reports a status.</p>;
  return (
    <>
      {consumers.map((c) => (
        <div key={c.clientId} data-testid="status-member">
          <h3>
            <span class="mono">{c.clientId}</span>{" "}
            {c.subscriptionConsistent ? (
              <span class="muted">subscription consistent</span>
            ) : (
              <span class="lag" data-testid="status-inconsistent">
                subscription differs from the group's
              </span>
            )}
          </h3>
          {c.runningInfo === undefined ? (
            <p class="muted">This client reports no running info (an older or non-Nimbus client).</p>
          ) : (
            <>
              <p>
                {c.runningInfo.consumeOrderly ? "Orderly" : "Concurrent"} listener; assigned:{" "}
                <span data-testid="status-assigned">
                  {c.runningInfo.assignedQueues.length === 0
                    ? "none"
                    : c.runningInfo.assignedQueues.map((q) => `${q.topic} ${q.brokerName}/${q.queueId}`).join(", ")}
                </span>
              </p>
              <TableBox label={`Queues of ${c.clientId}`}>
                <thead>
                  <tr>
                    <th>Topic</th>
                    <th>Broker</th>
                    <th>Queue</th>
                    <th>Locked</th>
                    <th>Cached messages</th>
                    <th>Cached bytes</th>
                    <th>Consume offset</th>
                    <th>Last pull</th>
                    <th>Last consume</th>
                  </tr>
                </thead>
                <tbody>
                  {c.runningInfo.queues.map((q) => (
                    <tr key={`${q.topic}:${q.brokerName}:${q.queueId}`} data-testid="status-queue-row">
                      <td>{q.topic}</td>
                      <td>{q.brokerName}</td>
                      <td>{q.queueId}</td>
                      <td>{q.locked ? "yes" : "no"}</td>
                      <td>{q.cachedMsgCount}</td>
                      <td>{q.cachedMsgSize}</td>
                      <td>{q.consumeOffset}</td>
                      <td title={formatTime(q.lastPullTimestamp)}>{formatAge(q.lastPullTimestamp, now)}</td>
                      <td title={formatTime(q.lastConsumeTimestamp)}>{formatAge(q.lastConsumeTimestamp, now)}</td>
                    </tr>
                  ))}
                </tbody>
              </TableBox>
            </>
          )}
        </div>
      ))}
    </>
  );
}
