/**
 * @module Tiny typed fetch helpers for tests of the HTTP API: `api(url).get/put/post/delete` answer
 * `{ status, body }` with the JSON body parsed (or the raw text when it is not JSON), and `raw` sends
 * any bytes with any method, for malformed requests. Beside them: the answer shapes of API.md, `ok` and
 * `expectError` to check an answer, and `snapshot` to show that a refused request wrote nothing.
 *
 * @example
 * const http = api(server.url);
 * const sent = ok(await http.post<SendAnswer>("/send", { topic: "T", messages: [{ body: b64("hi") }] }));
 */

import assert from "node:assert/strict";
import type {
  ClusterInfo,
  PulledMessage as CorePulledMessage,
  OffsetEntry,
  ProgressRow,
  PullStatus,
  QueueStatus,
  TopicRouteData,
} from "../../lib/protocol/index.js";

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RawRequest {
  method: string;
  path: string;
  /** Sent as is; a string is sent as UTF-8. */
  body?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface Api {
  get<T = unknown>(path: string): Promise<Answer<T>>;
  put<T = unknown>(path: string, body?: unknown): Promise<Answer<T>>;
  post<T = unknown>(path: string, body?: unknown): Promise<Answer<T>>;
  delete<T = unknown>(path: string): Promise<Answer<T>>;
  raw<T = unknown>(request: RawRequest): Promise<Answer<T>>;
}

export function api(baseUrl: string): Api {
  const call = async <T>(method: string, path: string, body?: string | Uint8Array, headers = {}) => {
    const res = await fetch(baseUrl + path, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // not JSON: the raw text is the body
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
  const withJson = <T>(method: string, path: string, body: unknown) =>
    body === undefined
      ? call<T>(method, path)
      : call<T>(method, path, JSON.stringify(body), { "content-type": "application/json" });
  return {
    get: (path) => call("GET", path),
    put: (path, body) => withJson("PUT", path, body),
    post: (path, body) => withJson("POST", path, body),
    delete: (path) => call("DELETE", path),
    raw: (r) => call(r.method, r.path, r.body, r.headers ?? {}),
  };
}

/** base64 of bytes or of a UTF-8 string, as the API carries message bodies. */
export const b64 = (data: string | Uint8Array): string => Buffer.from(data).toString("base64");

/** The UTF-8 text of a base64 body. */
export const text = (data: string): string => Buffer.from(data, "base64").toString("utf8");

// ---- Answer shapes (API.md) ----

/** What every failure answers (API.md "Errors"). */
export interface ErrorBody {
  code: string;
  message: string;
}

export type { BrokerData, QueueData } from "../../lib/protocol/index.js";
/** `GET /topics/{topic}/route`. */
export type RouteAnswer = TopicRouteData;
/** `GET /cluster`. */
export type ClusterAnswer = ClusterInfo;

export type StatusRow = QueueStatus;

export interface MessageIn {
  body: string;
  tags?: string;
  keys?: string | string[];
  properties?: Record<string, string>;
  delayTimeLevel?: number;
}

export interface SendAnswer {
  sendStatus: string;
  messageQueue: { topic: string; brokerName: string; queueId: number };
  queueOffset: number;
  msgIds: string[];
}

/** A pulled message as JSON: the body is base64. */
export type PulledMessage = Omit<CorePulledMessage, "body" | "flag"> & { body: string; flag?: number };

export interface PullAnswer {
  pullStatus: PullStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  messages: PulledMessage[];
}

export type OffsetRow = OffsetEntry;
export type { ProgressRow };

// ---- Checks ----

/** Asserts a 200 and returns the body. */
export function ok<T>(answer: Answer<T>): T {
  assert.equal(answer.status, 200, `expected 200, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Asserts `status` and an error body of exactly `{code, message}` with `code` and a non-empty message. */
export function expectError(answer: Answer<unknown>, status: number, code: string): ErrorBody {
  const body = answer.body as ErrorBody;
  assert.equal(answer.status, status, `expected ${status} ${code}, got ${answer.status}: ${JSON.stringify(body)}`);
  assert.equal(typeof body, "object", `error body is not JSON: ${String(body)}`);
  assert.deepEqual(Object.keys(body).sort(), ["code", "message"], `error body ${JSON.stringify(body)}`);
  assert.equal(body.code, code, `expected code ${code}: ${JSON.stringify(body)}`);
  assert.equal(typeof body.message, "string");
  assert.ok(body.message.length > 0, "the error message is empty");
  return body;
}

/** Offset rows in a fixed order (broker, queue), to compare tables whatever order the server lists them in. */
export const sortOffsets = (rows: OffsetRow[]): OffsetRow[] =>
  [...rows].sort((a, b) => a.brokerName.localeCompare(b.brokerName) || a.queueId - b.queueId);

/**
 * Everything a request could have written, as seen through the API: the topic list, and for each topic
 * its route, queue status and the offsets of each group (an error answer counts as the state too).
 */
export async function snapshot(http: Api, topics: string[], groups: string[] = []): Promise<unknown> {
  const list = ok(await http.get<{ topics: string[] }>("/topics")).topics.sort();
  const perTopic = await Promise.all(
    topics.map(async (topic) => {
      const t = encodeURIComponent(topic);
      const [route, status] = await Promise.all([http.get(`/topics/${t}/route`), http.get(`/topics/${t}/status`)]);
      const offsets = await Promise.all(
        groups.map(async (g) => {
          const answer = await http.get<{ offsetTable: OffsetRow[] }>(`/offsets/${g}/${t}`);
          return answer.status === 200 ? sortOffsets(answer.body.offsetTable) : answer.status;
        }),
      );
      return { topic, route: [route.status, route.body], status: [status.status, status.body], offsets };
    }),
  );
  return { list, perTopic };
}

/** Runs `request` and asserts that the snapshot of `topics` (and `groups`' offsets) did not change. */
export async function writesNothing<T>(
  http: Api,
  topics: string[],
  request: () => Promise<T>,
  groups: string[] = [],
): Promise<T> {
  const before = await snapshot(http, topics, groups);
  const result = await request();
  assert.deepEqual(await snapshot(http, topics, groups), before, "a refused request changed the stored state");
  return result;
}
