/**
 * @module The generated parts of docs/api.md: the endpoint table and the bounds table, rendered from the
 * endpoint definitions and bounds.ts. `npm run generate` writes them between their markers; `npm test`
 * fails when the page is not current.
 */
import * as bounds from "./bounds.js";
import { ENDPOINTS } from "./index.js";
import { CHANNEL_FRAMES } from "./push-channel.js";

export interface GeneratedSection {
  /** Marker name: the section stands between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`. */
  name: string;
  markdown: string;
}

/** A markdown table, cells padded to their column's width as Biome formats tables. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** One row per endpoint: route, service, summary and the codes it may answer. */
function endpointTable(): string {
  return table(
    ["route", "service", "what it does", "errors besides SYSTEM_BUSY, SYSTEM_ERROR"],
    ENDPOINTS.map((e) => [
      `\`${e.method} ${e.path}\`${e.auth === "none" ? " (no auth)" : ""}`,
      e.service,
      e.summary.replaceAll("|", "\\|"),
      e.errors.length === 0 ? "—" : e.errors.map((c) => `\`${c}\``).join(", "),
    ]),
  );
}

/** One row per named bound of bounds.ts. */
function boundsTable(): string {
  const rows = Object.entries(bounds)
    .filter((entry): entry is [string, number] => typeof entry[1] === "number")
    .map(([name, value]) => [`\`${name}\``, value.toLocaleString("en-US")]);
  return table(["bound (lib/protocol/bounds.ts)", "value"], rows);
}

/** One row per push channel frame: who sends it, its `type` and its fields. */
function channelTable(): string {
  const rows = (["client", "server"] as const).flatMap((from) =>
    Object.entries(CHANNEL_FRAMES[from]).map(([type, schema]) => [
      from === "client" ? "client → broker" : "broker → client",
      `\`${type}\``,
      Object.keys(schema.shape)
        .filter((k) => k !== "type")
        .map((k) => `\`${k}\``)
        .join(", ") || "—",
    ]),
  );
  return table(["direction", "type", "fields (lib/protocol/push-channel.ts)"], rows);
}

export function generatedSections(): GeneratedSection[] {
  return [
    { name: "endpoints", markdown: endpointTable() },
    { name: "bounds", markdown: boundsTable() },
    { name: "channel", markdown: channelTable() },
  ];
}

/** `text` with each section's markers' content replaced; throws when a marker pair is missing. */
export function withGeneratedSections(text: string, sections: GeneratedSection[] = generatedSections()): string {
  let out = text;
  for (const { name, markdown } of sections) {
    const open = `<!-- generated:${name} -->`;
    const close = `<!-- /generated:${name} -->`;
    const start = out.indexOf(open);
    const end = out.indexOf(close);
    if (start < 0 || end < start) throw new Error(`the page has no ${open} ... ${close} section`);
    out = `${out.slice(0, start + open.length)}\n${markdown}\n${out.slice(end)}`;
  }
  return out;
}
