/**
 * @module A consumer group's subscription (docs/subscriptions.md), on its group page: the topic, filter and
 * target it delivers to (an HTTPS URL, never its secret, or a Lambda function ARN), its batching, concurrency,
 * ordering and retries, and a Delete button (`deleteSubscription`). No subscription is the usual case, not an
 * error. Creating one is the CLI's or the API's (`nimbus updateSubscription`).
 */
import { useState } from "preact/hooks";
import { ErrorCode } from "../../core/errors.js";
import { type ApiError, call, nullOn } from "../api.js";
import { useConnection } from "../connection.js";
import { formatTime } from "../format.js";
import { href } from "../router.js";
import { asApiError, useApi } from "../use-api.js";
import { ErrorBox } from "../widgets.js";

export function GroupSubscription({ group }: { group: string }) {
  const conn = useConnection();
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const subscription = useApi(
    () => nullOn(ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST, call(conn, "getSubscription", { params: { group } })),
    [conn, group],
  );
  const remove = async () => {
    setError(undefined);
    try {
      await call(conn, "deleteSubscription", { params: { group } });
      subscription.reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const s = subscription.data;
  return (
    <>
      <h2>Subscription</h2>
      <ErrorBox error={subscription.error ?? error} />
      {s === null && (
        <p data-testid="subscription-none">
          No subscription: <span class="mono">nimbus updateSubscription -g {group}</span> creates one.
        </p>
      )}
      {s && (
        <dl class="headers" data-testid="subscription">
          <dt>Topic</dt>
          <dd>
            <a href={href(["topics", s.topic])}>{s.topic}</a>
          </dd>
          <dt>Filter</dt>
          <dd class="mono">
            {s.filterExpression.type} {s.filterExpression.expression}
          </dd>
          <dt>Target</dt>
          <dd class="mono" data-testid="subscription-target">
            {s.target.type === "http" ? s.target.url : s.target.functionArn}
          </dd>
          <dt>Batch</dt>
          <dd>
            {s.batchSize} messages, window {s.maxBatchingWindowMs} ms
          </dd>
          <dt>Concurrency</dt>
          <dd>{s.maxConcurrency}</dd>
          <dt>Ordering</dt>
          <dd>{s.ordering}</dd>
          <dt>Retries</dt>
          <dd>
            {s.maxReconsumeTimes}, backoff {s.retryBackoff.initialMs}–{s.retryBackoff.maxMs} ms, timeout {s.timeoutMs}{" "}
            ms
          </dd>
          <dt>Message trace</dt>
          <dd>{s.enableMsgTrace ? `on, to ${s.customizedTraceTopic ?? "RMQ_SYS_TRACE_TOPIC"}` : "off"}</dd>
          <dt>Updated (UTC)</dt>
          <dd>{formatTime(s.updatedAt)}</dd>
          <dt>Last delivery error</dt>
          <dd data-testid="subscription-last-error">
            {s.lastDeliveryError === undefined
              ? "none"
              : `${formatTime(s.lastDeliveryError.at)} UTC: ${s.lastDeliveryError.reason}`}
          </dd>
        </dl>
      )}
      {s && (
        <button type="button" onClick={() => void remove()}>
          Delete subscription
        </button>
      )}
    </>
  );
}
