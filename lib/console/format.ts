/** @module How the console shows values: times, ages, permissions, message bodies (text, hex, JSON). */
import { PermName } from "../core/perm-name.js";

/** `2026-11-30 18:52:02` (UTC); "—" for 0 (never). */
export function formatTime(ms: number): string {
  return ms === 0 ? "—" : new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

/** How long ago: `12 s ago`, `3 min ago`, `2 h ago`. */
export function formatAge(ms: number, now: number): string {
  if (ms === 0) return "never";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/** A message's keys as the API answers them (one key alone, or a list) as a list. */
export function keyList(keys: string | string[]): string[] {
  return typeof keys === "string" ? [keys] : keys;
}

/** RocketMQ's `RW-` form plus the number: `RW- (6)`. */
export function formatPerm(perm: number): string {
  return `${PermName.perm2String(perm)} (${perm})`;
}

/** Base64 (the API's bytes) to bytes. */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** The body as UTF-8 text; invalid sequences show as U+FFFD. */
export function bodyText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

/** A hex dump: 16 bytes a line, offset, hex, printable ASCII. */
export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += 16) {
    const row = bytes.subarray(at, at + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${at.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}

/** The body pretty-printed as JSON, or why it is not JSON. */
export function prettyJson(bytes: Uint8Array): { ok: true; text: string } | { ok: false; error: string } {
  try {
    return { ok: true, text: JSON.stringify(JSON.parse(bodyText(bytes)), null, 2) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
