/**
 * @module The create/update form of a topic: `PUT /topics/{topic}` with updateTopic's fields. The API
 * applies updateTopic's rules (names, 1 to 1024 queues, perm bits, live masters) and its refusals show
 * as the API worded them.
 */
import { useState } from "preact/hooks";
import { type ApiError, call } from "../api.js";
import { useConnection } from "../connection.js";
import { asApiError } from "../use-api.js";
import { ErrorBox } from "../widgets.js";

export interface TopicFormValues {
  readQueueNums: string;
  writeQueueNums: string;
  perm: string;
  brokerNames: string;
}

const EMPTY: TopicFormValues = { readQueueNums: "", writeQueueNums: "", perm: "", brokerNames: "" };

/** A number field: empty means the API's default, anything else goes as typed (the API judges it). */
function numberOrUndefined(text: string): number | undefined {
  return text.trim() === "" ? undefined : Number(text.trim());
}

export function TopicForm(props: {
  mode: "create" | "update";
  topic?: string;
  initial?: TopicFormValues;
  onSaved: (topic: string) => void;
}) {
  const conn = useConnection();
  const [name, setName] = useState(props.topic ?? "");
  const [values, setValues] = useState<TopicFormValues>(props.initial ?? EMPTY);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const field = (key: keyof TopicFormValues) => ({
    value: values[key],
    onInput: (e: { currentTarget: HTMLInputElement }) => setValues({ ...values, [key]: e.currentTarget.value }),
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const brokerNames = values.brokerNames
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    const body = {
      ...(numberOrUndefined(values.readQueueNums) !== undefined
        ? { readQueueNums: numberOrUndefined(values.readQueueNums) }
        : {}),
      ...(numberOrUndefined(values.writeQueueNums) !== undefined
        ? { writeQueueNums: numberOrUndefined(values.writeQueueNums) }
        : {}),
      ...(numberOrUndefined(values.perm) !== undefined ? { perm: numberOrUndefined(values.perm) } : {}),
      ...(brokerNames.length > 0 ? { brokerNames } : {}),
    } as { readQueueNums?: number; writeQueueNums?: number; perm?: number; brokerNames?: string[] };
    try {
      // Update mode changes the topic of the page, whatever the form was mounted with.
      const topic = props.mode === "update" && props.topic !== undefined ? props.topic : name.trim();
      await call(conn, "updateTopic", { params: { topic }, body });
      props.onSaved(topic);
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="form" onSubmit={submit} aria-label={props.mode === "create" ? "Create topic" : "Update topic"}>
      {props.mode === "create" && (
        <label>
          Topic
          <input name="topic" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
        </label>
      )}
      <div class="row">
        <label>
          Read queues
          <input name="readQueueNums" inputMode="numeric" placeholder="8" {...field("readQueueNums")} />
        </label>
        <label>
          Write queues
          <input name="writeQueueNums" inputMode="numeric" placeholder="8" {...field("writeQueueNums")} />
        </label>
        <label>
          Perm
          <input name="perm" inputMode="numeric" placeholder="6 (RW)" {...field("perm")} />
        </label>
      </div>
      <label>
        Brokers (comma-separated; empty: every live master)
        <input name="brokerNames" {...field("brokerNames")} />
      </label>
      <button type="submit" disabled={busy}>
        {props.mode === "create" ? "Create topic" : "Update topic"}
      </button>
      <ErrorBox error={error} />
    </form>
  );
}
