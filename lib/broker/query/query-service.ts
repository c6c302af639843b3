/**
 * @module Queries through the message index, which the queue log's index items carry: by UNIQ_KEY (mqadmin's
 * queryMsgById and queryMsgByUniqueKey: a Nimbus message id is the UNIQ_KEY, which names no broker or offset, so
 * both read the index) and by key in a time range, a bounded page at a time. Each hit is checked against the query.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { parseUniqId } from "../../core/message-id.js";
import {
  MAX_QUERY_BY_ID_MESSAGES,
  MAX_QUERY_CURSOR_LENGTH,
  MAX_QUERY_MESSAGES,
  type PulledMessage,
  type QueryByIdRequest,
  type QueryByIdResponse,
  type QueryByKeyRequest,
  type QueryByKeyResponse,
} from "../../protocol/index.js";
import { toPulled } from "../consume/index.js";
import { queueIds, type RouteCache } from "../names/index.js";
import { type QueueLog, type QueueRef, queuePk } from "../queue-log/index.js";
import {
  type BatchMatcher,
  compareHits,
  type IndexHit,
  mapBounded,
  mergeScans,
  type QueueResume,
  type QueueScan,
  scanQueue,
} from "./index-scan.js";
import type { KeyIndexSettings } from "./key-index-settings.js";
import { decodeCursor, encodeCursor, hashQueues } from "./query-cursor.js";

/** Index items one query reads at most over all queues of the topic (a page of 100 items is one request). */
export const MAX_SCAN_ITEMS = 20_000;
/** Queue partitions read at once. */
const SCAN_CONCURRENCY = 8;
/** A message id's store time is searched first this close to its birth time, then in the wider window. */
const NEAR_BIRTH_MS = { before: 10_000, after: 60_000 };
const WIDE_BIRTH_MS = { before: 600_000, after: 3_600_000 };

const illegal = (message: string) => new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);

interface Window {
  begin: number;
  end: number;
}

export class QueryService {
  constructor(
    private readonly settings: KeyIndexSettings,
    private readonly routes: RouteCache,
    private readonly queueLog: QueueLog,
    private readonly retentionMs: number,
    private readonly now: () => number,
  ) {}

  async byId(req: QueryByIdRequest): Promise<QueryByIdResponse> {
    const queues = await this.#queues(req.topic);
    const match: BatchMatcher = (b) => b.ids.flatMap((id, i) => (id === req.msgId ? [b.start + i] : []));
    const windows = this.#idWindows(req);
    let searched: Window | undefined;
    for (const window of windows) {
      searched = window;
      const scans = await this.#scan(queues, window, undefined, MAX_QUERY_BY_ID_MESSAGES, match);
      const hits = scans
        .flatMap((s) => s.hits)
        .sort(compareHits)
        .slice(0, MAX_QUERY_BY_ID_MESSAGES);
      const messages = await this.#read(hits, (m) => m.msgId === req.msgId);
      if (messages.length > 0) return { messages };
    }
    const range = searched === undefined ? "" : ` stored ${iso(searched.begin)} to ${iso(searched.end)}`;
    throw new NimbusError(
      ErrorCode.QUERY_NOT_FOUND,
      `no message with id ${req.msgId} in topic ${req.topic}${range} (give -b/-e for a message stored later, e.g. delayed)`,
    );
  }

  async byKey(req: QueryByKeyRequest): Promise<QueryByKeyResponse> {
    const cursor = req.cursor === undefined ? undefined : decodeCursor(req.cursor);
    if (req.cursor !== undefined && cursor === undefined) throw illegal("cursor is not one this API gave");
    const window = this.#window(req.begin, cursor?.end ?? req.end, this.now() - this.retentionMs);
    const queues = await this.#queues(req.topic);
    const queuesHash = hashQueues(queues.map(queuePk));
    if (cursor !== undefined && (cursor.queuesHash !== queuesHash || cursor.resumes.length !== queues.length)) {
      throw illegal(`the topic's queues changed since this cursor was given: query ${req.topic} again`);
    }
    if (!(await this.settings.keysIndexed(req.topic, true))) {
      throw illegal(
        `topic ${req.topic} does not index its messages' keys (attribute key.index=false): find messages by id or offset`,
      );
    }
    const maxNum = req.maxNum ?? MAX_QUERY_MESSAGES;
    const match: BatchMatcher = (b) => (b.keys ?? []).flatMap(([key, i]) => (key === req.key ? [b.start + i] : []));
    // A queue a cursor says is done is not read again.
    const live = queues.flatMap((q, i) =>
      cursor === undefined || cursor.resumes[i] !== undefined ? [{ q, i, from: cursor?.resumes[i] }] : [],
    );
    const scans = await this.#scan(
      live.map((l) => l.q),
      window,
      live.map((l) => l.from),
      maxNum,
      match,
    );
    const page = mergeScans(scans, maxNum);
    const resumes: Array<QueueResume | undefined> = queues.map(() => undefined);
    for (const [j, l] of live.entries()) resumes[l.i] = page.resumes[j];
    const messages = await this.#read(page.hits, (m) => m.keys.includes(req.key));
    if (!page.more) return { messages };
    const nextCursor = encodeCursor({ end: window.end, queuesHash, resumes });
    if (nextCursor.length > MAX_QUERY_CURSOR_LENGTH) {
      throw illegal(`topic ${req.topic} has too many queues to page through: give a narrower -b/-e range`);
    }
    return { messages, nextCursor };
  }

  /** Near the id's birth time first, then wider; a given range, or an id that is no UNIQ_KEY, as asked. */
  #idWindows(req: QueryByIdRequest): Window[] {
    const now = this.now();
    if (req.begin !== undefined || req.end !== undefined)
      return [this.#window(req.begin, req.end, now - this.retentionMs)];
    let born: number;
    try {
      born = parseUniqId(req.msgId, { now }).timestamp;
    } catch {
      return [this.#window(undefined, undefined, now - this.retentionMs)];
    }
    return [NEAR_BIRTH_MS, WIDE_BIRTH_MS].map((w) => ({ begin: Math.max(0, born - w.before), end: born + w.after }));
  }

  #window(begin: number | undefined, end: number | undefined, defaultBegin: number): Window {
    const window = { begin: begin ?? Math.max(0, defaultBegin), end: end ?? this.now() };
    if (window.begin > window.end) throw illegal(`begin ${window.begin} is after end ${window.end}`);
    return window;
  }

  async #queues(topic: string): Promise<QueueRef[]> {
    const route = await this.routes.get(topic);
    return route.queueDatas.flatMap((qd) =>
      queueIds(qd).map((queueId) => ({ topic, brokerName: qd.brokerName, queueId })),
    );
  }

  /** Each queue's scan, `SCAN_CONCURRENCY` at a time; `froms` by queue (a cursor's), else from the window's start. */
  async #scan(
    queues: readonly QueueRef[],
    window: Window,
    froms: ReadonlyArray<QueueResume | undefined> | undefined,
    maxHits: number,
    match: BatchMatcher,
  ): Promise<QueueScan[]> {
    const maxItems = Math.max(1, Math.floor(MAX_SCAN_ITEMS / Math.max(1, queues.length)));
    return mapBounded(
      queues.map((q, i) => ({ q, from: froms?.[i] })),
      SCAN_CONCURRENCY,
      ({ q, from }) => scanQueue(this.queueLog, q, { ...window, from, maxHits, maxItems }, match),
    );
  }

  /** The messages at the hits, in order; one that is gone (retention) or does not match is left out. */
  async #read(hits: readonly IndexHit[], matches: (m: PulledMessage) => boolean): Promise<PulledMessage[]> {
    const byPk = new Map<string, QueueRef>();
    const found = await mapBounded(hits, SCAN_CONCURRENCY, async (hit) => {
      const [topic = "", brokerName = "", queueId = "0"] = hit.pk.split("#");
      const q = byPk.get(hit.pk) ?? { topic, brokerName, queueId: Number(queueId) };
      byPk.set(hit.pk, q);
      // An inline batch's message came with the scan; an object batch's is read (one ranged GET).
      const stored = hit.message ?? (await this.queueLog.read(q, hit.offset, { maxMessages: 1 })).messages[0];
      if (stored === undefined || stored.queueOffset !== hit.offset) return undefined;
      const message = toPulled(q, stored);
      return matches(message) ? message : undefined;
    });
    return found.filter((m): m is PulledMessage => m !== undefined);
  }
}

/** A time for an answer's text. */
const iso = (ms: number) => new Date(ms).toISOString();
