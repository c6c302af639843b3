/**
 * @module Messages: browse one queue of a topic by offset range (a pull that commits nothing), filter the
 * range by msgId or key, open one message. A topic named alone lists its queues to pick from. A search by id
 * or key across a whole topic is the Search view (search.tsx, the message index).
 */
import { useState } from "preact/hooks";
import { type Answer, call } from "../api.js";
import { useConnection } from "../connection.js";
import { bodyText, formatTime, fromBase64, keyList } from "../format.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";

/** The group the console pulls as: a pull records nothing for its group, so this group never gets offsets. */
export const CONSOLE_GROUP = "nimbus_console";
export const PAGE_SIZES = [10, 20, 50, 100];

export type PulledMessageWire = Answer<"pull">["messages"][number];

export interface BrowseTarget {
  topic: string;
  broker: string;
  queue: number;
  from: number;
  count: number;
}

export function targetOf(query: URLSearchParams): BrowseTarget {
  return {
    topic: query.get("topic") ?? "",
    broker: query.get("broker") ?? "",
    queue: Number(query.get("queue") ?? 0),
    from: Number(query.get("from") ?? 0),
    count: Number(query.get("count") ?? 20),
  };
}

export function MessagesPage({ query }: { query: URLSearchParams }) {
  const conn = useConnection();
  const target = targetOf(query);
  const [form, setForm] = useState(target);
  const [filter, setFilter] = useState("");
  const ready = target.topic !== "" && target.broker !== "";
  const page = useApi(
    async () =>
      ready
        ? call(conn, "pull", {
            body: {
              consumerGroup: CONSOLE_GROUP,
              topic: target.topic,
              brokerName: target.broker,
              queueId: target.queue,
              queueOffset: target.from,
              maxMsgNums: target.count,
            },
          })
        : undefined,
    [conn, query.toString()],
  );
  const go = (t: BrowseTarget) =>
    navigate(href(["messages"], { topic: t.topic, broker: t.broker, queue: t.queue, from: t.from, count: t.count }));
  const needle = filter.trim();
  const shown = (page.data?.messages ?? []).filter(
    (m) => needle === "" || m.msgId === needle || keyList(m.keys).includes(needle),
  );
  const data = page.data;
  const topics = useApi(() => call(conn, "listTopics"), [conn]);
  return (
    <section>
      <h1>Messages</h1>
      <form
        class="form"
        aria-label="Browse queue"
        onSubmit={(e) => {
          e.preventDefault();
          go(form);
        }}
      >
        <div class="row">
          <label>
            Topic
            <input
              name="topic"
              list="console-topics"
              value={form.topic}
              required
              onInput={(e) => setForm({ ...form, topic: e.currentTarget.value })}
            />
            <datalist id="console-topics">
              {(topics.data?.topics ?? []).map((t) => (
                <option key={t} value={t} />
              ))}
            </datalist>
          </label>
          <label>
            Broker
            <input
              name="broker"
              value={form.broker}
              onInput={(e) => setForm({ ...form, broker: e.currentTarget.value })}
            />
          </label>
          <label>
            Queue
            <input
              name="queue"
              inputMode="numeric"
              value={form.queue}
              onInput={(e) => setForm({ ...form, queue: Number(e.currentTarget.value) })}
            />
          </label>
          <label>
            From offset
            <input
              name="from"
              inputMode="numeric"
              value={form.from}
              onInput={(e) => setForm({ ...form, from: Number(e.currentTarget.value) })}
            />
          </label>
          <label>
            Count
            <select
              name="count"
              value={form.count}
              onChange={(e) => setForm({ ...form, count: Number(e.currentTarget.value) })}
            >
              {PAGE_SIZES.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        </div>
        <button type="submit">Browse</button>
      </form>
      {target.topic !== "" && target.broker === "" && <QueuePicker topic={target.topic} count={target.count} />}
      <ErrorBox error={page.error} />
      <Loading when={page.loading && ready} />
      {data && (
        <>
          <p class="muted" data-testid="browse-summary">
            {data.pullStatus}: offsets {target.from} to {Math.max(target.from, data.nextBeginOffset - 1)} of{" "}
            {data.minOffset}…{data.maxOffset}
          </p>
          <div class="row">
            <button
              type="button"
              disabled={target.from <= data.minOffset}
              onClick={() => go({ ...target, from: Math.max(data.minOffset, target.from - target.count) })}
            >
              ← Earlier
            </button>
            <button
              type="button"
              disabled={data.nextBeginOffset >= data.maxOffset}
              onClick={() => go({ ...target, from: data.nextBeginOffset })}
            >
              Later →
            </button>
            <label class="inline">
              Find msgId or key in this range
              <input name="find" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
            </label>
          </div>
          <MessageTable messages={shown} />
        </>
      )}
    </section>
  );
}

/** A topic named without a queue: its queues with their offsets, each a link to its last messages. */
function QueuePicker({ topic, count }: { topic: string; count: number }) {
  const conn = useConnection();
  const status = useApi(() => call(conn, "topicStatus", { params: { topic } }), [conn, topic]);
  return (
    <>
      <ErrorBox error={status.error} />
      {status.data && (
        <ul class="topic-list" aria-label="Queues">
          {status.data.queues.map((q) => (
            <li key={`${q.brokerName}:${q.queueId}`}>
              <a
                href={href(["messages"], {
                  topic,
                  broker: q.brokerName,
                  queue: q.queueId,
                  from: Math.max(q.minOffset, q.maxOffset - count),
                  count,
                })}
              >
                {q.brokerName}/{q.queueId}
              </a>{" "}
              <span class="muted">
                offsets {q.minOffset}…{q.maxOffset}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function MessageTable({ messages }: { messages: PulledMessageWire[] }) {
  if (messages.length === 0) return <p>No message here.</p>;
  return (
    <TableBox label="Messages">
      <thead>
        <tr>
          <th>Offset</th>
          <th>msgId</th>
          <MessageSummaryHeaders />
        </tr>
      </thead>
      <tbody>
        {messages.map((m) => (
          <tr key={m.queueOffset} data-testid="message-row">
            <td>
              <a href={href(["message", m.topic, m.brokerName, m.queueId, m.queueOffset])}>{m.queueOffset}</a>
            </td>
            <td class="mono">{m.msgId}</td>
            <MessageSummaryCells message={m} />
          </tr>
        ))}
      </tbody>
    </TableBox>
  );
}

/** The headers of `MessageSummaryCells`. */
export function MessageSummaryHeaders() {
  return (
    <>
      <th>Tags</th>
      <th>Keys</th>
      <th>Stored (UTC)</th>
      <th>Body</th>
    </>
  );
}

/** A message's tags, keys, store time and the start of its body: the cells that end a row of messages. */
export function MessageSummaryCells({
  message: m,
}: {
  message: Pick<PulledMessageWire, "tags" | "keys" | "storeTimestamp" | "body">;
}) {
  return (
    <>
      <td>{m.tags}</td>
      <td>{keyList(m.keys).join(" ")}</td>
      <td>{formatTime(m.storeTimestamp)}</td>
      <td class="preview">{bodyText(fromBase64(m.body)).slice(0, 80)}</td>
    </>
  );
}
