/**
 * @module The user properties of a SendMessage request as they are on the wire. A protobuf map decodes into a
 * plain object, where an entry keyed `__proto__` silently vanishes (assigning a string to `__proto__` does
 * nothing), so a property the broker must refuse would be dropped instead. SendMessage's deserializer reads the
 * entries again from the bytes (SendMessageRequest.messages = 1, Message.user_properties = 2, each entry a key =
 * 1 and a value = 2) and keeps them beside the decoded request, so the send sees every property the client sent
 * and the broker's one property check (lib/broker/produce/message-checks.ts) refuses what it refuses on every door.
 */
import { TextDecoder } from "node:util";
import { MAX_PROPERTY_COUNT } from "../protocol/index.js";

const WIRE_PROPERTIES = Symbol("user properties as sent");
const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Per message of the request, its user properties in wire order (own data properties, `__proto__` included). */
export type WireProperties = [string, string][][];

/** Reads a length-delimited protobuf message field by field. */
class FieldReader {
  #at: number;

  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.#at = start;
  }

  /** The next field's number and, for a length-delimited one, its bytes; undefined at the end. */
  next(): { field: number; bytes?: { start: number; end: number } } | undefined {
    if (this.#at >= this.end) return undefined;
    const tag = this.#varint();
    const wireType = tag % 8;
    const field = Math.floor(tag / 8);
    switch (wireType) {
      case 0:
        this.#varint();
        return { field };
      case 1:
        this.#skip(8);
        return { field };
      case 2: {
        const length = this.#varint();
        const start = this.#at;
        this.#skip(length);
        return { field, bytes: { start, end: start + length } };
      }
      case 5:
        this.#skip(4);
        return { field };
      default:
        throw new RangeError(`wire type ${wireType} is not supported`);
    }
  }

  #varint(): number {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (this.#at >= this.end) throw new RangeError("truncated varint");
      const byte = this.buf[this.#at++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new RangeError("varint too long");
  }

  #skip(n: number): void {
    if (this.#at + n > this.end) throw new RangeError("truncated field");
    this.#at += n;
  }
}

/** The user properties of each message of a SendMessage request's bytes (undefined when they do not parse). */
export function sendRequestProperties(buf: Uint8Array): WireProperties | undefined {
  try {
    const out: WireProperties = [];
    const request = new FieldReader(buf);
    for (let f = request.next(); f !== undefined; f = request.next()) {
      if (f.field !== 1 || f.bytes === undefined) continue;
      const entries: [string, string][] = [];
      const message = new FieldReader(buf, f.bytes.start, f.bytes.end);
      for (let m = message.next(); m !== undefined; m = message.next()) {
        if (m.field !== 2 || m.bytes === undefined) continue;
        let key = "";
        let value = "";
        const entry = new FieldReader(buf, m.bytes.start, m.bytes.end);
        for (let e = entry.next(); e !== undefined; e = entry.next()) {
          if (e.bytes === undefined) continue;
          const text = utf8.decode(buf.subarray(e.bytes.start, e.bytes.end));
          if (e.field === 1) key = text;
          else if (e.field === 2) value = text;
        }
        entries.push([key, value]);
        // More than a message may have, which the broker's check refuses as such: the rest is not read (an entry
        // costs 2 bytes on the wire, so a 6 MiB request could name three million of them).
        if (entries.length > MAX_PROPERTY_COUNT) break;
      }
      out.push(entries);
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Keeps the wire properties beside a decoded request (not enumerable: the decoders never see them). */
export function attachWireProperties(decoded: object, properties: WireProperties | undefined): void {
  if (properties !== undefined) Object.defineProperty(decoded, WIRE_PROPERTIES, { value: properties });
}

/** The wire properties kept beside a decoded request, if its deserializer kept them. */
export function wirePropertiesOf(decoded: unknown): WireProperties | undefined {
  if (typeof decoded !== "object" || decoded === null) return undefined;
  return (decoded as { [WIRE_PROPERTIES]?: WireProperties })[WIRE_PROPERTIES];
}
