/**
 * @module A request's header fields (RocketMQ's `CommandCustomHeader`, carried as `extFields` strings), read as
 * the types the headers declare: a missing required field or an unparsable number is MESSAGE_ILLEGAL, as
 * RocketMQ's `decodeCommandCustomHeader` refuses it, before any broker call.
 */
import { badHeader } from "./codes.js";

const INTEGER = /^-?\d{1,19}$/;

export class Fields {
  /**
   * `aliases`: a header's other names by the names asked for (SEND_MESSAGE_V2's one-letter names): a field is
   * read under either, the one later in the header when it has both, as if the header's names were renamed.
   */
  constructor(
    private readonly ext: Readonly<Record<string, string>>,
    private readonly aliases?: ReadonlyMap<string, string>,
  ) {}

  #raw(name: string): string | undefined {
    const alias = this.aliases?.get(name);
    if (alias === undefined) return this.ext[name];
    const [short, long] = [this.ext[alias], this.ext[name]];
    if (short === undefined || long === undefined) return short ?? long;
    const keys = Object.keys(this.ext);
    return keys.indexOf(alias) > keys.indexOf(name) ? short : long;
  }

  optString(name: string): string | undefined {
    const v = this.#raw(name);
    return v === undefined || v === "" ? undefined : v;
  }

  string(name: string): string {
    const v = this.optString(name);
    if (v === undefined) throw badHeader(`the header field ${name} is missing`);
    return v;
  }

  optNumber(name: string): number | undefined {
    const v = this.optString(name);
    if (v === undefined) return undefined;
    if (!INTEGER.test(v)) throw badHeader(`the header field ${name} is not an integer: ${v.slice(0, 32)}`);
    const n = Number(v);
    if (!Number.isSafeInteger(n)) throw badHeader(`the header field ${name} is out of range: ${v}`);
    return n;
  }

  number(name: string): number {
    const n = this.optNumber(name);
    if (n === undefined) throw badHeader(`the header field ${name} is missing`);
    return n;
  }

  /** An int64 field (commit-log offsets, which pass 2^53), as a bigint. */
  long(name: string): bigint {
    const n = this.optLong(name);
    if (n === undefined) throw badHeader(`the header field ${name} is missing`);
    return n;
  }

  optLong(name: string): bigint | undefined {
    const v = this.optString(name);
    if (v === undefined) return undefined;
    if (!INTEGER.test(v)) throw badHeader(`the header field ${name} is not an integer: ${v.slice(0, 32)}`);
    const n = BigInt(v);
    if (n < -(1n << 63n) || n >= 1n << 63n) throw badHeader(`the header field ${name} is not a long: ${v}`);
    return n;
  }

  /** An int32 field (queue ids, flags, counts). */
  int(name: string): number {
    const n = this.number(name);
    if (n < -0x80000000 || n > 0x7fffffff) throw badHeader(`the header field ${name} is not an int: ${n}`);
    return n;
  }

  optInt(name: string): number | undefined {
    return this.optString(name) === undefined ? undefined : this.int(name);
  }

  bool(name: string): boolean {
    return this.#raw(name) === "true";
  }
}
