/**
 * @module A topic's write load, measured only when asked (`GET /topics/{topic}/status?load=true` reads the newest
 * index items of every queue, one query per index key, so never on a refresh): per queue its appends/s,
 * messages/s, index keys and the busiest key's share of DynamoDB's 1,000 write units/s per partition key, and a
 * warning naming the queues the API says run near that limit (80 % or more) with what helps.
 */
import { useState } from "preact/hooks";
import type { QueueStatus } from "../../protocol/index.js";
import { type ApiError, call } from "../api.js";
import { useConnection } from "../connection.js";
import { asApiError } from "../use-api.js";

type QueueLoad = NonNullable<QueueStatus["load"]>;

export interface LoadMeasure {
  /** The last measure's queues (with their `load`), until `clear()`. */
  queues: readonly QueueStatus[] | undefined;
  /** When the last measure answered (ms). */
  measuredAt: number;
  measuring: boolean;
  error: ApiError | undefined;
  measure(): void;
  clear(): void;
}

/** One measure of `topic`'s queues at a time, on the button's click only. */
export function useLoadMeasure(topic: string): LoadMeasure {
  const conn = useConnection();
  const [result, setResult] = useState<{ topic: string; queues: readonly QueueStatus[]; at: number }>();
  const [measuring, setMeasuring] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const measure = () => {
    if (measuring) return;
    setMeasuring(true);
    call(conn, "topicStatus", { params: { topic }, query: { load: "true" } })
      .then((answer) => {
        setResult({ topic, queues: answer.queues, at: Date.now() });
        setError(undefined);
      })
      .catch((err: unknown) => setError(asApiError(err)))
      .finally(() => setMeasuring(false));
  };
  const current = result?.topic === topic ? result : undefined;
  return {
    queues: current?.queues,
    measuredAt: current?.at ?? 0,
    measuring,
    error,
    measure,
    clear: () => setResult(undefined),
  };
}

/** The button, what a measure costs, and after one the warning or the all-clear. */
export function LoadPanel({ load }: { load: LoadMeasure }) {
  const hot = (load.queues ?? []).filter((q) => q.load?.nearLimit === true);
  return (
    <div class="load-panel">
      <p class="row">
        <button type="button" onClick={load.measure} disabled={load.measuring}>
          {load.measuring ? "Measuring…" : "Measure load"}
        </button>
        <span class="muted">
          Each queue's write rate from its newest index items: one read per index key, only when asked.
        </span>
      </p>
      {hot.length > 0 && <LoadWarning hot={hot} />}
      {load.queues !== undefined && hot.length === 0 && (
        <p class="ok" role="status" data-testid="load-ok">
          Measured {new Date(load.measuredAt).toISOString().slice(11, 19)} UTC: every queue below 80 % of its busiest
          partition key's write limit.
        </p>
      )}
    </div>
  );
}

function LoadWarning({ hot }: { hot: readonly QueueStatus[] }) {
  const named = hot.map((q) => `${q.brokerName}/${q.queueId} at ${sharePercent(q.load)}`).join(", ");
  return (
    <div class="warning" role="alert" data-testid="load-warning">
      <strong>Near the write limit:</strong> {named} of a partition key's 1,000 write units/s. Past it DynamoDB
      throttles the queue: sends slow down, then fail with <span class="mono">SYSTEM_BUSY</span>. Spread the writes:
      more write queues (Update, below; producers spread over them), batches (the SDK's{" "}
      <span class="mono">batching</span>, RocketMQ's batch send: one append each), or a hot topic (
      <span class="mono">hotTopics</span> in the stage's config spreads a queue over several keys). The capacity tables:
      docs/deploy.md, "Throttling and reserved concurrency".
    </div>
  );
}

/** The table's load headers, when a measure is shown. */
export function LoadHeaders() {
  return (
    <>
      <th>Appends/s</th>
      <th>Msgs/s</th>
      <th>Keys</th>
      <th>Busiest key</th>
    </>
  );
}

/** A queue's load cells; the busiest key's share stands out from 80 %. */
export function LoadCells({ load }: { load: QueueLoad | undefined }) {
  if (load === undefined) return <td colSpan={4}>—</td>;
  return (
    <>
      <td>{Math.round(load.appendsPerSecond)}</td>
      <td>{Math.round(load.messagesPerSecond)}</td>
      <td>{load.indexKeys}</td>
      <td class={load.nearLimit ? "lag" : undefined} data-testid="busiest-key-share">
        {sharePercent(load)}
      </td>
    </>
  );
}

const sharePercent = (load: QueueLoad | undefined): string => `${Math.round((load?.busiestKeyShare ?? 0) * 100)} %`;
