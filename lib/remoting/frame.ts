/**
 * @module RocketMQ's `RemotingCommand` frames: a 4-byte big-endian length (of what follows), a 4-byte word whose
 * high byte is the header's serialization (0 JSON, 1 ROCKETMQ binary) and whose low three bytes are the header's
 * length, the header, then the body. Decoding is bounded: a frame longer than `MAX_REQUEST_FRAME_BYTES`, a header longer
 * than `MAX_HEADER_BYTES`, more than `MAX_EXT_FIELDS` header fields, or a header that does not parse is a
 * `FrameError` (the connection answers nothing more and is closed).
 */

export const SERIALIZE_JSON = 0;
export const SERIALIZE_ROCKETMQ = 1;
export type SerializeType = typeof SERIALIZE_JSON | typeof SERIALIZE_ROCKETMQ;

/** The flag bit of a response, and of a oneway request (no answer is written). */
export const RESPONSE_FLAG = 1;
export const ONEWAY_FLAG = 2;

/** Largest frame written: 16 MiB (pull answers are cut well below it). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Largest frame read by default: 8 MiB (a 4 MiB message, or a batch, and its header fit well within). */
export const MAX_REQUEST_FRAME_BYTES = 8 * 1024 * 1024;
/** Largest header read: 256 KiB (a send's properties are at most 32 KiB). */
export const MAX_HEADER_BYTES = 256 * 1024;
/** Header fields read, at most. */
export const MAX_EXT_FIELDS = 128;

/** RocketMQ's LanguageCode, by its binary code. */
const LANGUAGES = [
  "JAVA",
  "CPP",
  "DOTNET",
  "PYTHON",
  "DELPHI",
  "ERLANG",
  "RUBY",
  "OTHER",
  "HTTP",
  "GO",
  "PHP",
  "OMS",
  "RUST",
];

export interface RemotingCommand {
  code: number;
  language: string;
  version: number;
  opaque: number;
  flag: number;
  remark: string | undefined;
  extFields: Record<string, string>;
  serializeType: SerializeType;
  body: Uint8Array | undefined;
}

export class FrameError extends Error {
  override readonly name = "FrameError";
}

export const isResponse = (c: Pick<RemotingCommand, "flag">) => (c.flag & RESPONSE_FLAG) !== 0;
export const isOneway = (c: Pick<RemotingCommand, "flag">) => (c.flag & ONEWAY_FLAG) !== 0;

/** Reassembles frames from a byte stream; `push` answers the whole frames that arrived, or throws `FrameError`. */
export class FrameDecoder {
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Bytes of a dropped frame still to come, discarded as they arrive. */
  #skip = 0;

  /** `maxFrameBytes`: the longest frame accepted (a client reading answers passes MAX_FRAME_BYTES). */
  constructor(private readonly maxFrameBytes = MAX_REQUEST_FRAME_BYTES) {}

  get buffered(): number {
    return this.#buffered;
  }

  push(received: Buffer): RemotingCommand[] {
    let chunk = received;
    if (this.#skip > 0) {
      const skipped = Math.min(this.#skip, chunk.byteLength);
      this.#skip -= skipped;
      chunk = chunk.subarray(skipped);
      if (chunk.byteLength === 0) return [];
    }
    this.#chunks.push(chunk);
    this.#buffered += chunk.byteLength;
    const frames: RemotingCommand[] = [];
    while (this.#buffered >= 4) {
      const head = this.#peek(4);
      const length = head.readUInt32BE(0);
      if (length < 4 || length > this.maxFrameBytes) throw new FrameError(`a frame of ${length} bytes`);
      if (this.#buffered < 4 + length) break;
      const frame = this.#take(4 + length);
      frames.push(decodeFrame(frame.subarray(4)));
    }
    return frames;
  }

  /**
   * Gives up the frame still arriving: what is buffered of it is let go and the rest of it is discarded as it
   * arrives. Answers its header (to refuse it by its opaque id); "header-incomplete" (nothing given up) while its
   * header has not all arrived; undefined when the header cannot be one, or is longer than `maxHeaderBytes` (then
   * nothing after it can be read as frames: the caller closes the connection).
   */
  dropPartial(maxHeaderBytes = MAX_HEADER_BYTES): RemotingCommand | "header-incomplete" | undefined {
    if (this.#buffered < 8) return "header-incomplete";
    const head = this.#peek(8);
    const length = head.readUInt32BE(0);
    const headerLength = head.readUInt32BE(4) & 0xffffff;
    if (headerLength > Math.min(maxHeaderBytes, MAX_HEADER_BYTES) || 4 + headerLength > length) return undefined;
    if (this.#buffered < 8 + headerLength) return "header-incomplete";
    let header: RemotingCommand;
    try {
      header = decodeFrame(this.#peek(8 + headerLength).subarray(4, 8 + headerLength));
    } catch {
      return undefined;
    }
    this.#skip = 4 + length - this.#buffered;
    this.#chunks = [];
    this.#buffered = 0;
    return header;
  }

  #peek(n: number): Buffer {
    if ((this.#chunks[0]?.byteLength ?? 0) < n) this.#chunks = [Buffer.concat(this.#chunks)];
    return this.#chunks[0] as Buffer;
  }

  #take(n: number): Buffer {
    const all = this.#peek(n);
    const taken = all.subarray(0, n);
    const rest = all.subarray(n);
    this.#chunks = rest.byteLength > 0 ? [rest, ...this.#chunks.slice(1)] : this.#chunks.slice(1);
    this.#buffered -= n;
    return taken;
  }
}

/** One frame without its length word: the serialization and header length word, the header, the body. */
export function decodeFrame(frame: Buffer): RemotingCommand {
  if (frame.byteLength < 4) throw new FrameError("a frame without its header length");
  const word = frame.readUInt32BE(0);
  const type = word >>> 24;
  const headerLength = word & 0xffffff;
  if (headerLength > MAX_HEADER_BYTES) throw new FrameError(`a header of ${headerLength} bytes`);
  if (4 + headerLength > frame.byteLength) throw new FrameError("a header longer than its frame");
  if (type !== SERIALIZE_JSON && type !== SERIALIZE_ROCKETMQ) throw new FrameError(`serialize type ${type}`);
  const header = frame.subarray(4, 4 + headerLength);
  const command = type === SERIALIZE_JSON ? decodeJsonHeader(header) : decodeBinaryHeader(header);
  command.serializeType = type;
  // A copy (from Node's small-buffer pool when short): the body outlives the chunk it came in, which it would
  // otherwise keep whole.
  if (frame.byteLength > 4 + headerLength) {
    const copy = Buffer.from(frame.subarray(4 + headerLength));
    command.body = new Uint8Array(copy.buffer, copy.byteOffset, copy.byteLength);
  }
  return command;
}

const int = (v: unknown, what: string): number => {
  if (typeof v !== "number" || !Number.isInteger(v)) throw new FrameError(`header field ${what} is not an integer`);
  return v;
};

function decodeJsonHeader(bytes: Buffer): RemotingCommand {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new FrameError("a JSON header that does not parse");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new FrameError("a JSON header that is not an object");
  const h = parsed as Record<string, unknown>;
  const extFields: Record<string, string> = Object.create(null);
  const ext = h.extFields;
  if (ext !== undefined && ext !== null) {
    if (typeof ext !== "object" || Array.isArray(ext)) throw new FrameError("extFields is not an object");
    const fields = ext as Record<string, unknown>;
    let count = 0;
    // JSON.parse makes own properties only: for-in walks exactly them.
    for (const k in fields) {
      if (++count > MAX_EXT_FIELDS) throw new FrameError(`over ${MAX_EXT_FIELDS} header fields`);
      const v = fields[k];
      if (typeof v === "string") extFields[k] = v;
      else if (typeof v === "number" || typeof v === "boolean") extFields[k] = String(v);
      else if (v !== null && v !== undefined) throw new FrameError(`header field ${k} is not a string`);
    }
  }
  const language =
    typeof h.language === "string"
      ? h.language
      : typeof h.language === "number"
        ? (LANGUAGES[h.language] ?? "OTHER")
        : "OTHER";
  const remark = h.remark;
  if (remark !== undefined && remark !== null && typeof remark !== "string")
    throw new FrameError("remark is not a string");
  return {
    code: int(h.code, "code"),
    language,
    version: h.version === undefined ? 0 : int(h.version, "version"),
    opaque: int(h.opaque ?? 0, "opaque"),
    flag: h.flag === undefined ? 0 : int(h.flag, "flag"),
    remark: remark ?? undefined,
    extFields,
    serializeType: SERIALIZE_JSON,
    body: undefined,
  };
}

function decodeBinaryHeader(b: Buffer): RemotingCommand {
  try {
    let at = 0;
    const code = b.readInt16BE(at);
    const language = LANGUAGES[b.readUInt8(at + 2)] ?? "OTHER";
    const version = b.readInt16BE(at + 3);
    const opaque = b.readInt32BE(at + 5);
    const flag = b.readInt32BE(at + 9);
    at = 13;
    const remarkLength = b.readInt32BE(at);
    at += 4;
    if (remarkLength < 0 || at + remarkLength > b.byteLength) throw new FrameError("a remark longer than its header");
    const remark = remarkLength > 0 ? b.toString("utf8", at, at + remarkLength) : undefined;
    at += remarkLength;
    const extLength = b.readInt32BE(at);
    at += 4;
    if (extLength < 0 || at + extLength > b.byteLength) throw new FrameError("header fields longer than their header");
    const end = at + extLength;
    const extFields: Record<string, string> = Object.create(null);
    let count = 0;
    while (at < end) {
      if (++count > MAX_EXT_FIELDS) throw new FrameError(`over ${MAX_EXT_FIELDS} header fields`);
      const kl = b.readUInt16BE(at);
      at += 2;
      if (at + kl > end) throw new FrameError("a header field name past its header");
      const key = b.toString("utf8", at, at + kl);
      at += kl;
      const vl = b.readInt32BE(at);
      at += 4;
      if (vl < 0 || at + vl > end) throw new FrameError("a header field value past its header");
      extFields[key] = b.toString("utf8", at, at + vl);
      at += vl;
    }
    return {
      code,
      language,
      version,
      opaque,
      flag,
      remark,
      extFields,
      serializeType: SERIALIZE_ROCKETMQ,
      body: undefined,
    };
  } catch (err) {
    if (err instanceof FrameError) throw err;
    throw new FrameError("a binary header cut short");
  }
}

/** A whole frame, length word included, in the command's serialization. */
export function encodeFrame(c: RemotingCommand): Buffer {
  const header = c.serializeType === SERIALIZE_ROCKETMQ ? encodeBinaryHeader(c) : encodeJsonHeader(c);
  const bodyLength = c.body?.byteLength ?? 0;
  const out = Buffer.allocUnsafe(8 + header.byteLength + bodyLength);
  out.writeUInt32BE(4 + header.byteLength + bodyLength, 0);
  out.writeUInt32BE(((c.serializeType & 0xff) << 24) | header.byteLength, 4);
  header.copy(out, 8);
  if (c.body) out.set(c.body, 8 + header.byteLength);
  return out;
}

function encodeJsonHeader(c: RemotingCommand): Buffer {
  const header: Record<string, unknown> = {
    code: c.code,
    extFields: c.extFields,
    flag: c.flag,
    language: c.language,
    opaque: c.opaque,
    serializeTypeCurrentRPC: "JSON",
    version: c.version,
  };
  if (c.remark !== undefined) header.remark = c.remark;
  return Buffer.from(JSON.stringify(header), "utf8");
}

function encodeBinaryHeader(c: RemotingCommand): Buffer {
  const remark = c.remark === undefined ? undefined : Buffer.from(c.remark, "utf8");
  const fields = Object.entries(c.extFields).map(([k, v]) => [Buffer.from(k, "utf8"), Buffer.from(v, "utf8")] as const);
  const extLength = fields.reduce((n, [k, v]) => n + 2 + k.byteLength + 4 + v.byteLength, 0);
  const out = Buffer.allocUnsafe(13 + 4 + (remark?.byteLength ?? 0) + 4 + extLength);
  out.writeInt16BE(c.code, 0);
  out.writeUInt8(Math.max(0, LANGUAGES.indexOf(c.language)), 2);
  out.writeInt16BE(c.version, 3);
  out.writeInt32BE(c.opaque, 5);
  out.writeInt32BE(c.flag, 9);
  let at = 13;
  out.writeInt32BE(remark?.byteLength ?? 0, at);
  at += 4;
  if (remark) at += remark.copy(out, at);
  out.writeInt32BE(extLength, at);
  at += 4;
  for (const [k, v] of fields) {
    out.writeUInt16BE(k.byteLength, at);
    at += 2 + k.copy(out, at + 2);
    out.writeInt32BE(v.byteLength, at);
    at += 4 + v.copy(out, at + 4);
  }
  return out;
}
