/** @module HTTP/2's frame layout (RFC 9113 §4, §6): the types, flags, error codes and settings a server uses. */

export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;

export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export const H2_ERROR = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;

export const SETTING = {
  HEADER_TABLE_SIZE: 1,
  ENABLE_PUSH: 2,
  MAX_CONCURRENT_STREAMS: 3,
  INITIAL_WINDOW_SIZE: 4,
  MAX_FRAME_SIZE: 5,
  MAX_HEADER_LIST_SIZE: 6,
} as const;

/** The connection preface a client sends first (RFC 9113 §3.4). */
export const CLIENT_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** Every window's size before any WINDOW_UPDATE or SETTINGS changes it. */
export const DEFAULT_WINDOW = 65_535;
/** The largest frame payload either side may send before the other raises it. */
export const DEFAULT_MAX_FRAME = 16_384;
/** The largest a flow-control window may grow. */
export const MAX_WINDOW = 2 ** 31 - 1;

/** A connection error: the connection ends with GOAWAY carrying `code`. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The 9-byte header of a frame. */
export function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const header = Buffer.allocUnsafe(9);
  header[0] = (length >>> 16) & 0xff;
  header[1] = (length >>> 8) & 0xff;
  header[2] = length & 0xff;
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return header;
}

/** A payload of 32-bit big-endian words (WINDOW_UPDATE, RST_STREAM, GOAWAY's head). */
export function words(...values: number[]): Buffer {
  const out = Buffer.allocUnsafe(values.length * 4);
  values.forEach((v, i) => {
    out.writeUInt32BE(v >>> 0, i * 4);
  });
  return out;
}

/** A SETTINGS payload: each id as 16 bits, its value as 32. */
export function settingsPayload(settings: readonly (readonly [number, number])[]): Buffer {
  const out = Buffer.allocUnsafe(settings.length * 6);
  settings.forEach(([id, value], i) => {
    out.writeUInt16BE(id, i * 6);
    out.writeUInt32BE(value, i * 6 + 2);
  });
  return out;
}

/** A WINDOW_UPDATE's increment (RFC 9113 §6.9); a payload not of 4 bytes is a connection error. */
export function windowIncrement(payload: Buffer): number {
  if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "WINDOW_UPDATE is 4 bytes");
  return payload.readUInt32BE(0) & 0x7fffffff;
}

/** What a client's SETTINGS change for a server: the window of its streams, the largest frame it takes. */
export function readSettings(payload: Buffer): { initialWindow?: number; maxFrame?: number } {
  if (payload.length % 6 !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "SETTINGS of a wrong length");
  const out: { initialWindow?: number; maxFrame?: number } = {};
  for (let at = 0; at < payload.length; at += 6) {
    const id = payload.readUInt16BE(at);
    const value = payload.readUInt32BE(at + 2);
    if (id === SETTING.INITIAL_WINDOW_SIZE) {
      if (value > MAX_WINDOW) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, "a window over 2^31-1");
      out.initialWindow = value;
    } else if (id === SETTING.MAX_FRAME_SIZE) {
      if (value < DEFAULT_MAX_FRAME || value > 16_777_215)
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `MAX_FRAME_SIZE ${value}`);
      out.maxFrame = value;
    }
    // HEADER_TABLE_SIZE: a server that never indexes what it sends ignores it. The others do not bind a server.
  }
  return out;
}

/** The SETTINGS a server opens with: its streams' limit and window, its header limit, no push. */
export function serverSettings(o: { maxConcurrentStreams: number; streamWindow: number; maxHeaderBlockBytes: number }) {
  return settingsPayload([
    [SETTING.MAX_CONCURRENT_STREAMS, o.maxConcurrentStreams],
    [SETTING.INITIAL_WINDOW_SIZE, o.streamWindow],
    [SETTING.MAX_HEADER_LIST_SIZE, o.maxHeaderBlockBytes],
    [SETTING.ENABLE_PUSH, 0],
  ]);
}
