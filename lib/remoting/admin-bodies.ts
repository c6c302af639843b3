/**
 * @module The bodies of RocketMQ's admin answers as its clients parse them (fastjson): tables keyed by a
 * `MessageQueue` are written the way fastjson writes a map with object keys, `{{"brokerName":…,"queueId":…,
 * "topic":…}:value}`, which plain JSON cannot say; everything else is JSON.
 */
import type { SubscriptionData } from "../protocol/index.js";
import type { HostAddress } from "./wire-message.js";

export interface WireQueue {
  topic: string;
  brokerName: string;
  queueId: number;
}

/** A map keyed by message queues, in fastjson's text (keys with their fields in fastjson's order). */
export function queueKeyedMap(entries: readonly (readonly [WireQueue, unknown])[]): string {
  const items = entries.map(([q, value]) => {
    const key = JSON.stringify({ brokerName: q.brokerName, queueId: q.queueId, topic: q.topic });
    return `${key}:${JSON.stringify(value)}`;
  });
  return `{${items.join(",")}}`;
}

/** A JSON object whose named fields are fastjson texts already (queueKeyedMap's) and the rest plain values. */
export function objectWithRaw(raw: Record<string, string>, plain: Record<string, unknown> = {}): Uint8Array {
  const parts = [
    ...Object.entries(plain).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`),
    ...Object.entries(raw).map(([k, v]) => `${JSON.stringify(k)}:${v}`),
  ];
  return Buffer.from(`{${parts.join(",")}}`, "utf8");
}

/** `ip:port` of a host address. */
export function addressText(a: HostAddress): string {
  return `${Array.from(a.ip).join(".")}:${a.port}`;
}

/** Java's String.hashCode, which RocketMQ's SubscriptionData carries per tag (`codeSet`). */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** A subscription as RocketMQ's SubscriptionData (FilterAPI's tags and their hash codes for a TAG expression). */
export function wireSubscription(s: SubscriptionData): Record<string, unknown> {
  const type = s.expressionType ?? "TAG";
  const all = s.subString === "" || s.subString === "*";
  const tags =
    type === "TAG" && !all
      ? s.subString
          .split("||")
          .map((t) => t.trim())
          .filter((t) => t !== "")
      : [];
  return {
    classFilterMode: false,
    topic: s.topic,
    subString: all ? "*" : s.subString,
    tagsSet: tags,
    codeSet: tags.map(javaHash),
    subVersion: 0,
    expressionType: type,
  };
}
