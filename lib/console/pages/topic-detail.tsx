/**
 * @module One topic: its route (queues and perm per broker), per-queue offsets and last store time, its write
 * load when measured (queue-load.tsx), update and delete.
 */
import { useState } from "preact/hooks";
import { type ApiError, call } from "../api.js";
import { useConnection } from "../connection.js";
import { formatPerm } from "../format.js";
import { href, navigate } from "../router.js";
import { asApiError, useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";
import { LoadPanel, useLoadMeasure } from "./queue-load.js";
import { QueueStatusTable, type QueueTableKind } from "./queue-status-table.js";
import { TopicForm } from "./topic-form.js";

const TOPIC_QUEUES: QueueTableKind = { label: "Queues", testId: "queue-row", browseLabel: "Browse" };

export function TopicDetailPage({ topic }: { topic: string }) {
  const conn = useConnection();
  const route = useApi(() => call(conn, "topicRoute", { params: { topic } }), [conn, topic]);
  const status = useApi(() => call(conn, "topicStatus", { params: { topic } }), [conn, topic]);
  const load = useLoadMeasure(topic);
  const reload = () => {
    route.reload();
    status.reload();
    load.clear();
  };
  const first = route.data?.queueDatas[0];
  return (
    <section>
      <p>
        <a href={href(["topics"])}>← Topics</a>
      </p>
      <h1>
        Topic <span class="mono">{topic}</span>
      </h1>
      <ErrorBox error={route.error} />
      <Loading when={route.loading && route.data === undefined} />
      {route.data && (
        <>
          <h2>Route</h2>
          <TableBox label="Route">
            <thead>
              <tr>
                <th>Broker</th>
                <th>Read queues</th>
                <th>Write queues</th>
                <th>Perm</th>
                <th>Addresses</th>
              </tr>
            </thead>
            <tbody>
              {route.data.queueDatas.map((q) => {
                const addrs = route.data?.brokerDatas.find((b) => b.brokerName === q.brokerName)?.brokerAddrs ?? {};
                return (
                  <tr key={q.brokerName} data-testid="route-row">
                    <td>{q.brokerName}</td>
                    <td>{q.readQueueNums}</td>
                    <td>{q.writeQueueNums}</td>
                    <td>{formatPerm(q.perm)}</td>
                    <td class="mono">
                      {Object.entries(addrs)
                        .map(([id, a]) => `${id}: ${a}`)
                        .join(", ")}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </TableBox>
        </>
      )}
      <h2>Queues</h2>
      <ErrorBox error={status.error} />
      <ErrorBox error={load.error} />
      {status.data && (
        <>
          <LoadPanel load={load} />
          <QueueStatusTable topic={topic} queues={load.queues ?? status.data.queues} kind={TOPIC_QUEUES} />
        </>
      )}
      {route.data && first && (
        <>
          <h2>Update</h2>
          <TopicForm
            key={`${first.readQueueNums}:${first.writeQueueNums}:${first.perm}`}
            mode="update"
            topic={topic}
            initial={{
              readQueueNums: String(first.readQueueNums),
              writeQueueNums: String(first.writeQueueNums),
              perm: String(first.perm),
              brokerNames: "",
            }}
            onSaved={reload}
          />
        </>
      )}
      <DeleteTopic topic={topic} />
    </section>
  );
}

/** Delete, behind a confirmation step. */
function DeleteTopic({ topic }: { topic: string }) {
  const conn = useConnection();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const remove = async () => {
    try {
      await call(conn, "deleteTopic", { params: { topic } });
      navigate(href(["topics"]));
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <div class="danger-zone">
      <h2>Delete</h2>
      <p class="muted">The route goes at once; the messages stay until retention.</p>
      {confirming ? (
        <>
          <button type="button" class="danger" onClick={remove}>
            Delete {topic} now
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </>
      ) : (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Delete topic…
        </button>
      )}
      <ErrorBox error={error} />
    </div>
  );
}
