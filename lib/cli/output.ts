/**
 * @module How `nimbus` prints: mqadmin-style tables (`#Header` columns, numbers right-aligned), JSON for
 * scripts, times and message bodies. Data goes to stdout; progress and notes go to stderr.
 */

import { hasControlCharacter, isControlCode } from "../core/control-characters.js";

export type Cell = string | number;

export interface Column {
  /** Printed with mqadmin's `#` prefix. */
  header: string;
  /** Right-aligned (numbers). Default: right when every cell of the column is a number. */
  align?: "left" | "right";
}

/**
 * A table as mqadmin prints one: a `#Header` row, then one row per item, columns two spaces apart.
 *
 * @example
 * formatTable([{ header: "Topic" }, { header: "QID" }], [["TopicTest", 0]]);
 * // "#Topic     #QID\nTopicTest     0\n"
 */
export function formatTable(columns: readonly Column[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((row) => columns.map((_, i) => escapeControls(String(row[i] ?? ""), false)));
  const headers = columns.map((c) => `#${c.header}`);
  const widths = columns.map((_, i) => Math.max(headers[i]!.length, ...text.map((r) => r[i]!.length)));
  const right = columns.map((c, i) => c.align ?? (rows.every((r) => typeof r[i] === "number") ? "right" : "left"));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const last = i === cells.length - 1;
        if (right[i] === "right") return cell.padStart(widths[i]!);
        return last ? cell : cell.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...text.map(line)].join("\n")}\n`;
}

/** `Label:  value` lines with the values aligned, as mqadmin's queryMsgById. */
export function formatFields(fields: readonly (readonly [string, Cell])[]): string {
  const width = Math.max(...fields.map(([label]) => label.length + 1));
  return fields
    .map(([label, value]) => `${`${label}:`.padEnd(width)}  ${escapeControls(String(value), false)}`.trimEnd())
    .join("\n")
    .concat("\n");
}

export function printJson(value: unknown): void {
  // JSON escapes C0 controls itself; DEL and the C1 range (0x7f-0x9f, CSI among them) it leaves raw.
  process.stdout.write(`${escapeControls(JSON.stringify(value, null, 2), true)}\n`);
}

/** Prints `text` with every control character but newline and tab escaped (no terminal escape injection). */
export function print(text: string): void {
  process.stdout.write(escapeControls(text, true));
}

/** A note for people (stderr), so that stdout stays data. */
export function note(text: string): void {
  process.stderr.write(`${escapeControls(text, true)}\n`);
}

/**
 * `text` safe to print on a terminal: each control character as `\xNN` or `\uNNNN`, so data read from the
 * broker (tags, keys, properties, topic names, error messages) can never move the cursor, recolor, retitle
 * the window or hide text. `keepLayout` keeps newlines and tabs (whole outputs); cells escape them too.
 */
export function escapeControls(text: string, keepLayout: boolean): string {
  if (!hasControlCharacter(text)) return text;
  let out = "";
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (!isControlCode(code) || (keepLayout && (c === "\n" || c === "\t"))) out += c;
    else out += code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return out;
}

/** Local time as mqadmin prints it, `2024-05-01 12:00:00.123`; `N/A` for 0 (never). */
export function formatTime(ms: number): string {
  if (!ms) return "N/A";
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text when it is UTF-8, else undefined. */
export function bodyText(body: Uint8Array): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

/**
 * A body on one line: the text itself when it is plain UTF-8, JSON-quoted when it has control characters
 * (newlines), `base64:...` when it is not text. Bodies longer than `max` characters are cut with `...`.
 */
export function formatBody(body: Uint8Array, max = Number.POSITIVE_INFINITY): string {
  const text = bodyText(body);
  const shown =
    text === undefined
      ? `base64:${Buffer.from(body).toString("base64")}`
      : hasControlCharacter(text)
        ? escapeControls(JSON.stringify(text), false)
        : text;
  return shown.length > max ? `${shown.slice(0, max)}...` : shown;
}

/** `1.5 MiB`, `512 B`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** A rate with thousands separators and no decimals above 100: `12,345`, `42.5`. */
export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return "-";
  return perSecond >= 100 ? Math.round(perSecond).toLocaleString("en-US") : perSecond.toFixed(1);
}
