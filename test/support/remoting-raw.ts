/**
 * @module A bare RocketMQ remoting client for tests: it writes frames (well-formed ones, or any bytes) to a port
 * and reads the answers by opaque id, so tests can speak the protocol without a Java process, hostile frames
 * included.
 */
import { connect, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import {
  encodeFrame,
  FrameDecoder,
  MAX_FRAME_BYTES,
  ONEWAY_FLAG,
  RESPONSE_FLAG,
  type RemotingCommand,
  RequestCode,
  SERIALIZE_JSON,
  SERIALIZE_ROCKETMQ,
} from "../../lib/remoting/index.js";

export interface RawRequest {
  code: number;
  extFields?: Record<string, string>;
  body?: Uint8Array;
  oneway?: boolean;
  binary?: boolean;
}

export class RawRemoting {
  readonly #decoder = new FrameDecoder(MAX_FRAME_BYTES);
  readonly #waiting = new Map<number, (c: RemotingCommand) => void>();
  #opaque = 0;
  readonly closed: Promise<void>;
  /** Bytes received in all (a hostile frame must get none). */
  received = 0;
  /** The door's own requests to this client (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE), in order. */
  readonly calls: RemotingCommand[] = [];

  private constructor(readonly socket: Socket) {
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      this.received += chunk.byteLength;
      let frames: RemotingCommand[];
      try {
        frames = this.#decoder.push(chunk);
      } catch {
        // Not frames (a TLS server's alert to a client without TLS): the connection is no remoting one.
        socket.destroy();
        return;
      }
      for (const frame of frames) {
        if ((frame.flag & RESPONSE_FLAG) === 0) this.calls.push(frame);
        else this.#waiting.get(frame.opaque)?.(frame);
      }
    });
  }

  static async open(port: number, host = "127.0.0.1"): Promise<RawRemoting> {
    const socket = connect(port, host);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("error", reject);
    });
    return new RawRemoting(socket);
  }

  /** Over TLS, trusting `ca` (PEM) for 127.0.0.1. */
  static async openTls(port: number, ca: string | Buffer, host = "127.0.0.1"): Promise<RawRemoting> {
    const socket = connectTls({ port, host, ca });
    await new Promise<void>((resolve, reject) => {
      socket.once("secureConnect", () => resolve());
      socket.once("error", reject);
    });
    return new RawRemoting(socket);
  }

  request(r: RawRequest): Promise<RemotingCommand> {
    const { answer, frame } = this.#frame(r);
    this.socket.write(frame);
    return answer;
  }

  /** Writes the first `sent` bytes of a request's frame; `finish` writes the rest. */
  partialRequest(
    r: RawRequest,
    sent: number,
  ): { answer: Promise<RemotingCommand>; more(upTo: number): void; finish(): void } {
    const { answer, frame } = this.#frame(r);
    let at = sent;
    this.socket.write(frame.subarray(0, sent));
    /** Writes the frame's bytes from where it stopped up to `upTo` (its end: all of it). */
    const upTo = (end: number) => {
      this.socket.write(frame.subarray(at, end));
      at = end;
    };
    return { answer, more: upTo, finish: () => upTo(frame.length) };
  }

  #frame(r: RawRequest): { answer: Promise<RemotingCommand>; frame: Buffer } {
    const opaque = ++this.#opaque;
    const answer = new Promise<RemotingCommand>((resolve) => this.#waiting.set(opaque, resolve));
    const frame = encodeFrame({
      code: r.code,
      language: "JAVA",
      version: 453,
      opaque,
      flag: r.oneway ? ONEWAY_FLAG : 0,
      remark: undefined,
      extFields: r.extFields ?? {},
      serializeType: r.binary ? SERIALIZE_ROCKETMQ : SERIALIZE_JSON,
      body: r.body,
    });
    return { answer, frame };
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }
}

export const json = (c: RemotingCommand): unknown =>
  c.body === undefined ? undefined : JSON.parse(Buffer.from(c.body).toString("utf8"));

/** A HEART_BEAT registering `clientId` as a clustering consumer of `group` on `topic` (every tag). */
export const consumerHeartbeat = (clientId: string, group: string, topic: string): RawRequest => ({
  code: RequestCode.HEART_BEAT,
  body: Buffer.from(
    JSON.stringify({
      clientID: clientId,
      producerDataSet: [],
      consumerDataSet: [
        {
          groupName: group,
          consumeType: "CONSUME_PASSIVELY",
          messageModel: "CLUSTERING",
          consumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
          subscriptionDataSet: [{ topic, subString: "*", expressionType: "TAG" }],
        },
      ],
    }),
  ),
});

/** A PULL_MESSAGE of up to 32 messages of queue 0 of `topic` from its first offset, for `${topic}G`, every tag. */
export const pullFromStart = (topic: string): RawRequest => ({
  code: RequestCode.PULL_MESSAGE,
  extFields: {
    consumerGroup: `${topic}G`,
    topic,
    queueId: "0",
    queueOffset: "0",
    maxMsgNums: "32",
    sysFlag: String(0x4),
    commitOffset: "0",
    subscription: "*",
    subVersion: "0",
    expressionType: "TAG",
  },
});
