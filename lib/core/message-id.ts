/**
 * @module RocketMQ's client-made unique message id (`MessageClientIDSetter`), the `UNIQ_KEY` property:
 * 32 upper-case hex characters for 16 bytes,
 * `ip(4) | pid(2) | per-process hash(4) | ms since the month began(4) | counter(2)`.
 * The first 10 bytes are fixed per process; the rest make ids unique within it. No Node imports here:
 * the process values come in as options (see `lib/core/message-id-node.ts`).
 */
import { ErrorCode, NimbusError } from "./errors.js";

/** How month starts are computed: RocketMQ uses the JVM's zone; Nimbus defaults to UTC (Lambda's zone). */
export type MessageIdTimeZone = "utc" | "local";

export interface MessageIdGeneratorOptions {
  /** The 4 bytes of an IPv4 address (or a dotted string); 4 random bytes when omitted. */
  ip?: string | Uint8Array | readonly number[];
  /** The process id; its low 16 bits are used. Random when omitted. */
  pid?: number;
  /** 32 bits that tell apart generators of one process (Java uses its class loader's hash). Random when omitted. */
  hash?: number;
  /** Clock in ms since the epoch; `Date.now` by default. */
  now?: () => number;
  /** Zone of the month start the time field counts from; "utc" by default. */
  timeZone?: MessageIdTimeZone;
}

/** What an id tells about its producer. */
export interface UniqIdInfo {
  /** Dotted IPv4, or for a 56-character id (a Java client on IPv6) 8 colon-separated groups as Java prints them. */
  ip: string;
  pid: number;
  /** When the id was made, in ms since the epoch, as RocketMQ's `getNearlyTimeFromID` reconstructs it. */
  timestamp: number;
}

const IPV4_ID_LENGTH = 32;
const IPV6_ID_LENGTH = 56;
/** If the clock steps back by less than this across a month start, RocketMQ writes 0 instead. */
const NTP_TOLERANCE_MS = 1_000_000;

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}

const hex = (value: number, digits: number): string => value.toString(16).toUpperCase().padStart(digits, "0");

// Not cryptographic: the prefix only has to differ between processes, as Java's class-loader hash does.
const randomUint32 = (): number => Math.floor(Math.random() * 0x1_0000_0000);

function randomBytes4(): number[] {
  const r = randomUint32();
  return [r >>> 24, (r >>> 16) & 0xff, (r >>> 8) & 0xff, r & 0xff];
}

function ipBytes(ip: string | Uint8Array | readonly number[]): number[] {
  const bytes =
    typeof ip === "string" ? ip.split(".").map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : -1)) : [...ip];
  if (bytes.length !== 4 || bytes.some((b) => !Number.isInteger(b) || b < 0 || b > 255)) {
    throw illegal(`Not an IPv4 address: ${String(ip)}`);
  }
  return bytes;
}

/** The first ms of the month that holds `ms`, and of the month `offset` months later. */
function monthStart(ms: number, timeZone: MessageIdTimeZone, offset = 0): number {
  const date = new Date(ms);
  return timeZone === "utc"
    ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1)
    : new Date(date.getFullYear(), date.getMonth() + offset, 1).getTime();
}

/**
 * Makes unique message ids for one process. Create one per process (or use `createUniqId`): two
 * generators with the same prefix could repeat each other's ids.
 *
 * @example
 * const ids = new MessageIdGenerator({ ip: "10.0.0.7", pid: 4242, hash: 0x1234abcd });
 * ids.next(); // "0A000007" (ip) + "1092" (pid) + "1234ABCD" + 8 hex of ms in the month + "0000" (counter)
 */
export class MessageIdGenerator {
  /** The 20 hex characters every id of this generator starts with. */
  readonly prefix: string;
  private readonly now: () => number;
  private readonly timeZone: MessageIdTimeZone;
  private startTime = 0;
  private nextStartTime = 0;
  private counter = 0;

  constructor(options: MessageIdGeneratorOptions = {}) {
    const ip = ipBytes(options.ip ?? randomBytes4());
    const pid = options.pid ?? randomUint32();
    const hash = options.hash ?? randomUint32();
    if (!Number.isInteger(pid) || pid < 0) throw illegal(`Not a process id: ${pid}`);
    if (!Number.isInteger(hash)) throw illegal(`Not a 32-bit hash: ${hash}`);
    this.prefix = ip.map((b) => hex(b, 2)).join("") + hex(pid & 0xffff, 4) + hex(hash >>> 0, 8);
    this.now = options.now ?? Date.now;
    this.timeZone = options.timeZone ?? "utc";
  }

  /** A new id: the prefix, ms since this month began (unsigned 32 bits) and a 16-bit counter that wraps. */
  next(): string {
    const current = this.now();
    if (current >= this.nextStartTime) {
      this.startTime = monthStart(current, this.timeZone);
      this.nextStartTime = monthStart(current, this.timeZone, 1);
    }
    // Java's (int) cast: negative after 2^31 ms (day 25) as well as after a clock step back; only a small
    // step back is zeroed, and the 4 bytes read back unsigned, so day 25 onwards still parses right.
    let diff = (current - this.startTime) | 0;
    if (diff < 0 && diff > -NTP_TOLERANCE_MS) diff = 0;
    const id = this.prefix + hex(diff >>> 0, 8) + hex(this.counter, 4);
    this.counter = (this.counter + 1) & 0xffff;
    return id;
  }
}

let defaultGenerator: MessageIdGenerator | undefined;

/**
 * A new id from the process-wide default generator. Until a runtime installs one with node values (see
 * `installNodeMessageIdGenerator` in `lib/core/message-id-node.ts`), the default has a random prefix.
 *
 * @example
 * message.properties[MessageConst.UNIQ_KEY] ??= createUniqId();
 */
export function createUniqId(): string {
  defaultGenerator ??= new MessageIdGenerator();
  return defaultGenerator.next();
}

/** Replaces the generator behind `createUniqId`. */
export function setDefaultMessageIdGenerator(generator: MessageIdGenerator): void {
  defaultGenerator = generator;
}

/** Throws `PARAMETER_ILLEGAL` unless `id` is 32 (IPv4) or 56 (IPv6, from Java clients) hex characters. */
function idBytes(id: string): number[] {
  if (
    typeof id !== "string" ||
    (id.length !== IPV4_ID_LENGTH && id.length !== IPV6_ID_LENGTH) ||
    !/^[0-9a-fA-F]*$/.test(id)
  ) {
    throw illegal(`Not a unique message id (32 or 56 hex characters): ${String(id)}`);
  }
  return id.match(/../g)!.map((b) => Number.parseInt(b, 16));
}

function ipString(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join(".");
  const groups: string[] = [];
  for (let i = 0; i < bytes.length; i += 2)
    groups.push(hex(bytes[i]!, 2).toLowerCase() + hex(bytes[i + 1]!, 2).toLowerCase());
  return groups.join(":");
}

/**
 * Reads the producer's address, pid and time back from an id. The time holds only ms since a month
 * began, so, as in RocketMQ, it is placed in the current month unless that would be after `now`, then in
 * the previous month: right for ids under a month old (and a producer clock not ahead of `now`).
 *
 * @example
 * parseUniqId(new MessageIdGenerator({ ip: "10.0.0.7", pid: 4242 }).next()); // { ip: "10.0.0.7", pid: 4242, timestamp: ... }
 */
export function parseUniqId(id: string, options: { now?: number; timeZone?: MessageIdTimeZone } = {}): UniqIdInfo {
  const bytes = idBytes(id);
  const ipLength = bytes.length === IPV6_ID_LENGTH / 2 ? 16 : 4;
  const at = (i: number): number => bytes[i]!;
  const pid = (at(ipLength) << 8) | at(ipLength + 1);
  const t = ipLength + 6;
  const spanMs = ((at(t) << 24) | (at(t + 1) << 16) | (at(t + 2) << 8) | at(t + 3)) >>> 0;
  const now = options.now ?? Date.now();
  const timeZone = options.timeZone ?? "utc";
  let start = monthStart(now, timeZone);
  // RocketMQ tests `>=`, which sends an id read in the ms it was made back a month; only the future should.
  if (start + spanMs > now) start = monthStart(now, timeZone, -1);
  return { ip: ipString(bytes.slice(0, ipLength)), pid, timestamp: start + spanMs };
}
