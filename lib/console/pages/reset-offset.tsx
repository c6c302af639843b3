/**
 * @module Reset a consumer group's offsets of one topic by time (`resetOffsetByTime`): to the first message
 * stored at or after a UTC date-time, to `first` (the oldest kept) or `now` (past every stored message).
 * A refusal shows the API's message.
 */
import { useState } from "preact/hooks";
import { type Answer, type ApiError, call } from "../api.js";
import { useConnection } from "../connection.js";
import { formatTime } from "../format.js";
import { asApiError } from "../use-api.js";
import { ErrorBox } from "../widgets.js";

type Target = "time" | "first" | "now";

/** `2026-11-30T18:52` read as UTC, in ms; NaN when not a date-time. */
export function parseUtcDateTime(text: string): number {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? Date.parse(`${text}Z`) : Number.NaN;
}

export function ResetOffset(props: { group: string; topics: string[]; onReset: () => void }) {
  const conn = useConnection();
  const [topic, setTopic] = useState("");
  const [target, setTarget] = useState<Target>("time");
  const [time, setTime] = useState("");
  const [result, setResult] = useState<Answer<"resetOffsetByTime"> | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const chosenTopic = topic || props.topics[0] || "";
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setResult(undefined);
    // The browser's datetime input only gives valid times; were one unreadable (NaN goes as null), the API's
    // PARAMETER_ILLEGAL message is what shows.
    const timestamp = target === "time" ? parseUtcDateTime(time) : target;
    try {
      const answer = await call(conn, "resetOffsetByTime", {
        params: { group: props.group, topic: chosenTopic.trim() },
        body: { timestamp },
      });
      setResult(answer);
      props.onReset();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <form class="form" aria-label="Reset offset by time" onSubmit={submit}>
      <h2>Reset offset by time</h2>
      <p class="muted">
        Moves every queue of the topic to the first message stored at or after the time; live consumers move there at
        their next membership read.
      </p>
      <label>
        Topic
        <input
          name="resetTopic"
          list="reset-topics"
          value={chosenTopic}
          required
          onInput={(e) => setTopic(e.currentTarget.value)}
        />
        <datalist id="reset-topics">
          {props.topics.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </label>
      <label>
        To
        <select name="resetTarget" value={target} onChange={(e) => setTarget(e.currentTarget.value as Target)}>
          <option value="time">a time (UTC)</option>
          <option value="first">first (the oldest message kept)</option>
          <option value="now">now (past every stored message)</option>
        </select>
      </label>
      {target === "time" && (
        <label>
          Time (UTC)
          <input
            name="resetTime"
            type="datetime-local"
            step={1}
            value={time}
            required
            onInput={(e) => setTime(e.currentTarget.value)}
          />
        </label>
      )}
      <button type="submit">Reset offsets</button>
      <ErrorBox error={error} />
      {result && (
        <p class="ok" role="status" data-testid="reset-result">
          Reset to {formatTime(result.resetAt)}:{" "}
          {result.offsetTable.map((o) => `${o.brokerName}/${o.queueId} → ${o.offset}`).join(", ")}
        </p>
      )}
    </form>
  );
}
