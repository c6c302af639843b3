/** @module One message: headers, properties, the body as text, hex or pretty JSON, and re-send. */
import { useState } from "preact/hooks";
import { MessageConst } from "../../core/message.js";
import { type Answer, type ApiError, call } from "../api.js";
import { useConnection } from "../connection.js";
import { bodyText, formatTime, fromBase64, hexDump, keyList, prettyJson } from "../format.js";
import { href } from "../router.js";
import { asApiError, useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";
import { MessageTrace } from "./message-trace.js";
import { CONSOLE_GROUP, type PulledMessageWire } from "./messages.js";

type BodyView = "text" | "hex" | "json";

/**
 * A re-sent copy carries the user properties only: every RocketMQ system property (MessageConst) is the
 * broker's or the retry machinery's (an id, tags and keys that have fields, delays and timers that would
 * delay the copy, the transaction and retry bookkeeping), so none is copied; ORIGIN_MESSAGE_ID is set anew.
 */
const SYSTEM_PROPERTIES: ReadonlySet<string> = new Set(Object.values(MessageConst));

/** Where a re-send goes by default: the topic a retried or dead-lettered message came from, else its own. */
export function resendTopic(m: PulledMessageWire): string {
  return m.properties[MessageConst.RETRY_TOPIC] ?? m.topic;
}

export function MessageViewPage(props: { topic: string; broker: string; queue: number; offset: number }) {
  const conn = useConnection();
  const found = useApi(async () => {
    const answer = await call(conn, "pull", {
      body: {
        consumerGroup: CONSOLE_GROUP,
        topic: props.topic,
        brokerName: props.broker,
        queueId: props.queue,
        queueOffset: props.offset,
        maxMsgNums: 1,
      },
    });
    return answer.messages.find((m) => m.queueOffset === props.offset) ?? null;
  }, [conn, props.topic, props.broker, props.queue, props.offset]);
  const m = found.data;
  return (
    <section>
      <p>
        <a
          href={href(["messages"], {
            topic: props.topic,
            broker: props.broker,
            queue: props.queue,
            from: props.offset,
          })}
        >
          ← Queue {props.broker}/{props.queue}
        </a>
      </p>
      <h1>
        Message at offset {props.offset} of {props.topic} {props.broker}/{props.queue}
      </h1>
      <ErrorBox error={found.error} />
      <Loading when={found.loading && m === undefined} />
      {m === null && <p>No message at this offset (not written yet, or removed by retention).</p>}
      {m && <MessageDetails message={m} />}
    </section>
  );
}

function MessageDetails({ message: m }: { message: PulledMessageWire }) {
  const [view, setView] = useState<BodyView>("text");
  const bytes = fromBase64(m.body);
  const json = prettyJson(bytes);
  const keys = keyList(m.keys);
  const headers: [string, string | number][] = [
    ["msgId", m.msgId],
    ["Topic", m.topic],
    ["Broker", m.brokerName],
    ["Queue", m.queueId],
    ["Queue offset", m.queueOffset],
    ["Tags", m.tags],
    ["Keys", keys.join(" ")],
    ["Flag", m.flag],
    ["Born (UTC)", formatTime(m.bornTimestamp)],
    ["Stored (UTC)", formatTime(m.storeTimestamp)],
    ["Reconsume times", m.reconsumeTimes],
    ["Body size", `${bytes.length} bytes`],
  ];
  return (
    <>
      <h2>Headers</h2>
      <dl class="headers" data-testid="message-headers">
        {headers.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd class="mono">{value}</dd>
          </div>
        ))}
      </dl>
      <h2>Properties</h2>
      <TableBox label="Properties">
        <tbody>
          {Object.entries(m.properties).map(([name, value]) => (
            <tr key={name} data-testid="property-row">
              <th class="mono">{name}</th>
              <td class="mono">{value}</td>
            </tr>
          ))}
        </tbody>
      </TableBox>
      <h2>Body</h2>
      <div class="tabs" role="tablist" aria-label="Body as">
        {(["text", "hex", "json"] as const).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} onClick={() => setView(v)}>
            {v === "text" ? "Text" : v === "hex" ? "Hex" : "JSON"}
          </button>
        ))}
      </div>
      <pre class="body" data-testid="message-body">
        {view === "text" ? bodyText(bytes) : view === "hex" ? hexDump(bytes) : json.ok ? json.text : ""}
      </pre>
      {view === "json" && !json.ok && (
        <p class="error" role="alert">
          Not JSON: {json.error}
        </p>
      )}
      <MessageTrace msgId={m.msgId} />
      <Resend message={m} />
    </>
  );
}

/** Re-send: a copy of the message (body, tags, keys, flag, user properties) to a topic, with a new msgId. */
function Resend({ message: m }: { message: PulledMessageWire }) {
  const conn = useConnection();
  const [topic, setTopic] = useState(resendTopic(m));
  const [result, setResult] = useState<Answer<"send"> | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const resend = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setResult(undefined);
    const properties = Object.fromEntries(
      Object.entries(m.properties).filter(([name]) => !SYSTEM_PROPERTIES.has(name)),
    );
    const keys = keyList(m.keys);
    try {
      const sent = await call(conn, "send", {
        body: {
          topic: topic.trim(),
          messages: [{ body: m.body, ...(m.tags ? { tags: m.tags } : {}), keys, properties, flag: m.flag }],
        },
      });
      setResult(sent);
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <form class="form resend" aria-label="Re-send" onSubmit={resend}>
      <h2>Re-send</h2>
      <p class="muted">
        Sends a copy with a new msgId: same body, tags, keys, flag and user properties (the broker's own properties,
        such as the retry bookkeeping, stay behind).
      </p>
      <label>
        To topic
        <input name="resendTopic" value={topic} required onInput={(e) => setTopic(e.currentTarget.value)} />
      </label>
      <button type="submit">Re-send message</button>
      <ErrorBox error={error} />
      {result && (
        <p class="ok" role="status" data-testid="resend-result">
          Sent as {result.msgIds[0]} to{" "}
          <a
            href={href([
              "message",
              result.messageQueue.topic,
              result.messageQueue.brokerName,
              result.messageQueue.queueId,
              result.queueOffset,
            ])}
          >
            {result.messageQueue.brokerName}/{result.messageQueue.queueId} at offset {result.queueOffset}
          </a>
        </p>
      )}
    </form>
  );
}
