/** @module Small shared pieces of the views: the API error box, a loading line, a stat. */
import type { ComponentChildren } from "preact";
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
