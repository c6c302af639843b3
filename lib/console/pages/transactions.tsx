/** @module Transactions: look one up by id and producer group (transactionInfo), with its half message. */
import { useState } from "preact/hooks";
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { bodyText, formatTime, fromBase64 } from "../format.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading } from "../widgets.js";

export function TransactionsPage({ query }: { query: URLSearchParams }) {
  const conn = useConnection();
  const id = query.get("id") ?? "";
  const group = query.get("group") ?? "";
  const [form, setForm] = useState({ id, group });
  const ready = id !== "" && group !== "";
  const info = useApi(
    async () =>
      ready
        ? call(conn, "transactionInfo", { params: { transactionId: id }, query: { producerGroup: group } })
        : undefined,
    [conn, id, group],
  );
  const half = useApi(
    async () =>
      ready
        ? call(conn, "transactionMessage", { params: { transactionId: id }, query: { producerGroup: group } })
        : undefined,
    [conn, id, group],
  );
  const t = info.data;
  return (
    <section>
      <h1>Transactions</h1>
      <form
        class="form"
        aria-label="Find transaction"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(href(["transactions"], { id: form.id.trim(), group: form.group.trim() }));
        }}
      >
        <div class="row">
          <label>
            Transaction id
            <input
              name="transactionId"
              value={form.id}
              required
              onInput={(e) => setForm({ ...form, id: e.currentTarget.value })}
            />
          </label>
          <label>
            Producer group
            <input
              name="producerGroup"
              value={form.group}
              required
              onInput={(e) => setForm({ ...form, group: e.currentTarget.value })}
            />
          </label>
        </div>
        <button type="submit">Find</button>
      </form>
      <ErrorBox error={info.error} />
      <Loading when={info.loading && ready} />
      {t && (
        <dl class="headers" data-testid="transaction">
          <div>
            <dt>State</dt>
            <dd>{t.state}</dd>
          </div>
          <div>
            <dt>Check-backs</dt>
            <dd>{t.checkTimes}</dd>
          </div>
          <div>
            <dt>Target queue</dt>
            <dd class="mono">
              {t.messageQueue.topic} {t.messageQueue.brokerName}/{t.messageQueue.queueId}
            </dd>
          </div>
          <div>
            <dt>Stored (UTC)</dt>
            <dd>{formatTime(t.storeTimestamp)}</dd>
          </div>
          {t.queueOffset !== undefined && (
            <div>
              <dt>Delivered at</dt>
              <dd>
                <a
                  href={href([
                    "message",
                    t.messageQueue.topic,
                    t.messageQueue.brokerName,
                    t.messageQueue.queueId,
                    t.queueOffset,
                  ])}
                >
                  offset {t.queueOffset}
                </a>
              </dd>
            </div>
          )}
        </dl>
      )}
      {half.data && (
        <>
          <h2>Half message</h2>
          <pre class="body">{bodyText(fromBase64(half.data.body))}</pre>
        </>
      )}
    </section>
  );
}
