/**
 * @module Search: a topic's messages by key (queryMsgByKey, a page at a time, oldest first, with an optional
 * time range) or by message id (queryMsgByUniqueKey), through the message index; each result opens the message.
 */
import { useState } from "preact/hooks";
import { type Answer, call } from "../api.js";
import { useConnection } from "../connection.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";
import { MessageSummaryCells, MessageSummaryHeaders } from "./messages.js";

type Found = Answer<"queryMessagesByKey">["messages"][number];

interface SearchForm {
  topic: string;
  by: "key" | "id";
  text: string;
  /** `datetime-local` values (UTC), or "". */
  begin: string;
  end: string;
}

const toMs = (local: string): number | undefined => (local === "" ? undefined : Date.parse(`${local}Z`));

export function SearchPage({ query }: { query: URLSearchParams }) {
  const conn = useConnection();
  const asked: SearchForm = {
    topic: query.get("topic") ?? "",
    by: query.get("by") === "id" ? "id" : "key",
    text: query.get("q") ?? "",
    begin: query.get("begin") ?? "",
    end: query.get("end") ?? "",
  };
  const cursor = query.get("cursor") ?? undefined;
  const [form, setForm] = useState(asked);
  const ready = asked.topic !== "" && asked.text !== "";
  const range = {
    ...(toMs(asked.begin) === undefined ? {} : { begin: toMs(asked.begin) }),
    ...(toMs(asked.end) === undefined ? {} : { end: toMs(asked.end) }),
  };
  const result = useApi(async () => {
    if (!ready) return undefined;
    if (asked.by === "id") {
      const found = await call(conn, "queryMessageById", { body: { topic: asked.topic, msgId: asked.text, ...range } });
      return { messages: found.messages, nextCursor: undefined };
    }
    return call(conn, "queryMessagesByKey", {
      body: { topic: asked.topic, key: asked.text, ...range, ...(cursor === undefined ? {} : { cursor }) },
    });
  }, [conn, query.toString()]);
  const go = (f: SearchForm, next?: string) =>
    navigate(
      href(["search"], {
        topic: f.topic.trim(),
        by: f.by,
        q: f.text.trim(),
        ...(f.begin === "" ? {} : { begin: f.begin }),
        ...(f.end === "" ? {} : { end: f.end }),
        ...(next === undefined ? {} : { cursor: next }),
      }),
    );
  const set = (patch: Partial<SearchForm>) => setForm({ ...form, ...patch });
  return (
    <section>
      <h1>Search messages</h1>
      <form
        class="form"
        aria-label="Search messages"
        onSubmit={(e) => {
          e.preventDefault();
          go(form);
        }}
      >
        <div class="row">
          <label>
            Topic
            <input name="topic" value={form.topic} required onInput={(e) => set({ topic: e.currentTarget.value })} />
          </label>
          <label>
            By
            <select name="by" value={form.by} onChange={(e) => set({ by: e.currentTarget.value as "key" | "id" })}>
              <option value="key">Message key</option>
              <option value="id">Message id</option>
            </select>
          </label>
          <label>
            Key or id
            <input name="q" value={form.text} required onInput={(e) => set({ text: e.currentTarget.value })} />
          </label>
        </div>
        <div class="row">
          <label>
            Stored from (UTC)
            <input
              name="begin"
              type="datetime-local"
              value={form.begin}
              onInput={(e) => set({ begin: e.currentTarget.value })}
            />
          </label>
          <label>
            until (UTC)
            <input
              name="end"
              type="datetime-local"
              value={form.end}
              onInput={(e) => set({ end: e.currentTarget.value })}
            />
          </label>
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={result.error} />
      <Loading when={result.loading && ready} />
      {result.data && (
        <>
          <FoundTable messages={result.data.messages} />
          {result.data.nextCursor !== undefined && (
            <button type="button" onClick={() => go(asked, result.data?.nextCursor)}>
              More →
            </button>
          )}
        </>
      )}
    </section>
  );
}

function FoundTable({ messages }: { messages: Found[] }) {
  if (messages.length === 0) return <p>No message with that key in this range.</p>;
  return (
    <TableBox label="Found messages">
      <thead>
        <tr>
          <th>msgId</th>
          <th>Queue</th>
          <th>Offset</th>
          <MessageSummaryHeaders />
        </tr>
      </thead>
      <tbody>
        {messages.map((m) => (
          <tr key={`${m.brokerName}/${m.queueId}/${m.queueOffset}`} data-testid="found-row">
            <td class="mono">
              <a href={href(["message", m.topic, m.brokerName, m.queueId, m.queueOffset])}>{m.msgId}</a>
            </td>
            <td>
              {m.brokerName}/{m.queueId}
            </td>
            <td>{m.queueOffset}</td>
            <MessageSummaryCells message={m} />
          </tr>
        ))}
      </tbody>
    </TableBox>
  );
}
