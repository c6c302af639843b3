/** @module Small shared pieces of the views: the API error box, a loading line, a stat, a form that opens a name. */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { ApiError } from "./api.js";

/** An API failure as the API worded it: `CODE: message`. */
export function ErrorBox({ error }: { error: ApiError | undefined }) {
  if (error === undefined) return null;
  return (
    <div class="error" role="alert">
      <strong>{error.code}</strong>: {error.message}
    </div>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  ) : null;
}

/** A scrollable table, so wide tables stay usable on a phone. */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-box">
      <table aria-label={label}>{children}</table>
    </div>
  );
}

export function Stat({ label, value, testId }: { label: string; value: ComponentChildren; testId?: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{label}</span>
      <span class="stat-value" data-testid={testId}>
        {value}
      </span>
    </div>
  );
}

/** A one-field form that opens what is typed (a consumer group, a producer group): `open` gets the trimmed name. */
export function OpenByName({
  form,
  label,
  name,
  initial = "",
  open,
}: {
  /** The form's accessible name. */
  form: string;
  label: string;
  /** The input's name. */
  name: string;
  initial?: string;
  open: (value: string) => void;
}) {
  const [value, setValue] = useState(initial);
  return (
    <form
      class="form"
      aria-label={form}
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim() !== "") open(value.trim());
      }}
    >
      <label>
        {label}
        <input name={name} value={value} required onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit">Open</button>
    </form>
  );
}
