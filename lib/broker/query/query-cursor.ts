/**
 * @module The cursor of a query by key, as the API carries it: opaque text (base64url) holding the range's end
 * (fixed by the first page, so paging ends), a hash of the topic's queues (a cursor of another queue set is
 * refused), and where each queue goes on: done, or a batch and an offset in it. Numbers are LEB128 varints, so a
 * queue costs a few bytes (a 64-queue topic's cursor is about 500 characters).
 */
import { createHash } from "node:crypto";
import type { QueueResume } from "./index-scan.js";

const VERSION = 1;
const DONE = 0;
const GOES_ON = 1;

export interface QueryCursor {
  end: number;
  queuesHash: number;
  /** By the queue's place in the topic's queue list; undefined: done. */
  resumes: Array<QueueResume | undefined>;
}

/** A hash of the queue list (its order too), so that a cursor is only used with the queues it was made for. */
export function hashQueues(pks: readonly string[]): number {
  return createHash("sha256").update(pks.join("\n")).digest().readUInt32BE(0);
}

export function encodeCursor(cursor: QueryCursor): string {
  const bytes: number[] = [VERSION];
  writeVarint(bytes, cursor.end);
  writeVarint(bytes, cursor.queuesHash);
  writeVarint(bytes, cursor.resumes.length);
  for (const resume of cursor.resumes) {
    if (resume === undefined) {
      bytes.push(DONE);
      continue;
    }
    bytes.push(GOES_ON);
    writeVarint(bytes, resume.batchStart);
    writeVarint(bytes, resume.offset - resume.batchStart);
  }
  return Buffer.from(bytes).toString("base64url");
}

/** The cursor, or undefined when the text is not one `encodeCursor` made. */
export function decodeCursor(text: string): QueryCursor | undefined {
  const bytes = Buffer.from(text, "base64url");
  const reader = { bytes, at: 0 };
  if (bytes[reader.at++] !== VERSION) return undefined;
  const end = readVarint(reader);
  const queuesHash = readVarint(reader);
  const count = readVarint(reader);
  if (end === undefined || queuesHash === undefined || count === undefined || count > bytes.length) return undefined;
  const resumes: Array<QueueResume | undefined> = [];
  for (let i = 0; i < count; i++) {
    const state = bytes[reader.at++];
    if (state === DONE) {
      resumes.push(undefined);
      continue;
    }
    const batchStart = readVarint(reader);
    const skip = readVarint(reader);
    if (state !== GOES_ON || batchStart === undefined || skip === undefined) return undefined;
    resumes.push({ batchStart, offset: batchStart + skip });
  }
  return reader.at === bytes.length ? { end, queuesHash, resumes } : undefined;
}

function writeVarint(out: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** A varint of at most 8 bytes (56 bits: every safe integer), or undefined past the end or past that. */
function readVarint(reader: { bytes: Buffer; at: number }): number | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    const byte = reader.bytes[reader.at++];
    if (byte === undefined) return undefined;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return Number.isSafeInteger(value) ? value : undefined;
    scale *= 0x80;
  }
  return undefined;
}
