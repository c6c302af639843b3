/**
 * @module A consumer group's dead letters: the queues of its `%DLQ%<group>` topic (messages that failed
 * `maxReconsumeTimes` times), with their counts and links to browse them. From a dead letter's page,
 * re-send sends it back to the topic it came from (message-view.tsx).
 */
import { ErrorCode } from "../../core/errors.js";
import { dlqTopic } from "../../core/names.js";
import { call, nullOn } from "../api.js";
import { useConnection } from "../connection.js";
import { useApi } from "../use-api.js";
import { ErrorBox } from "../widgets.js";
import { QueueStatusTable, type QueueTableKind } from "./queue-status-table.js";

const DEAD_LETTER_QUEUES: QueueTableKind = {
  label: "Dead letters",
  testId: "dead-letter-row",
  browseLabel: "Browse dead letters",
};

export function DeadLetters({ group }: { group: string }) {
  const conn = useConnection();
  const topic = dlqTopic(group);
  // No dead-letter topic yet is the usual case, not an error.
  const status = useApi(
    () => nullOn(ErrorCode.TOPIC_NOT_EXIST, call(conn, "topicStatus", { params: { topic } })),
    [conn, topic],
  );
  const queues = status.data?.queues ?? [];
  const total = queues.reduce((n, q) => n + (q.maxOffset - q.minOffset), 0);
  return (
    <>
      <h2>Dead letters</h2>
      <ErrorBox error={status.error} />
      {status.data === null && (
        <p data-testid="dead-letter-total">
          No dead letters (no <span class="mono">{topic}</span> topic).
        </p>
      )}
      {status.data && (
        <>
          <p data-testid="dead-letter-total">
            {total} in <span class="mono">{topic}</span>
          </p>
          <QueueStatusTable topic={topic} queues={queues} kind={DEAD_LETTER_QUEUES} />
        </>
      )}
    </>
  );
}
