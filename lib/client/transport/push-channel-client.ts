/**
 * @module The SDK's end of the push channel (docs/push-channel.md): one WebSocket per client instance,
 * found with `GET /push-channel` (or given), authenticated like the HTTP requests (SigV4 with `iam`). It
 * sends the client's registration (again whenever what it holds changes) and a ping every
 * `CHANNEL_PING_INTERVAL_MS`, and hands the broker's hints on. When it drops it reconnects with a growing
 * pause; meanwhile `up` is false and the client polls as without it. Hints are only hints: the client
 * still reads offsets and members over HTTP, so nothing depends on one arriving.
 *
 * @example
 * const channel = new PushChannelClient({ api, registration: () => frame, handlers, onError });
 * channel.start();
 * // ...
 * await channel.close();
 */
import WebSocket from "ws";
import {
  CHANNEL_PING_INTERVAL_MS,
  type QueueHintFrame,
  type RegisterFrame,
  ServerFrameSchema,
} from "../../protocol/index.js";
import type { NimbusApi } from "./api-client.js";

export interface ChannelHandlers {
  /** A queue has messages below `maxOffset`. */
  queue(hint: QueueHintFrame): void;
  /** The members of a consumer group changed. */
  members(consumerGroup: string): void;
  /** Check-backs wait for this producer in the group. */
  checks(producerGroup: string): void;
  /**
   * The broker has this connection's (new) registration: hints flow from now on. What was appended before
   * it got no hint, so the client reads its queues once.
   */
  up(): void;
  /** The connection dropped: poll until it is back. */
  down(): void;
}

export interface PushChannelClientOptions {
  api: NimbusApi;
  /** The channel's URL; undefined asks the API (`GET /push-channel`). */
  url?: string | undefined;
  /** What to register, read each time a registration is sent. */
  registration(): RegisterFrame;
  handlers: ChannelHandlers;
  /** First pause before reconnecting; it doubles up to 30 s. Default 1000 ms. */
  reconnectMillis?: number | undefined;
  pingIntervalMillis?: number | undefined;
  onError(err: unknown, what: string): void;
}

const MAX_RECONNECT_MS = 30_000;

export class PushChannelClient {
  #ws: WebSocket | undefined;
  #up = false;
  #closed = false;
  #url: string | null | undefined;
  #reconnectDelay: number;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #lastRegistration = "";
  #connectionId: string | undefined;
  /** Counters for tests and metrics. */
  readonly stats = {
    connects: 0,
    registrations: 0,
    reregistrations: 0,
    pings: 0,
    hints: 0,
    membersHints: 0,
    checksHints: 0,
  };

  constructor(private readonly options: PushChannelClientOptions) {
    this.#url = options.url;
    this.#reconnectDelay = options.reconnectMillis ?? 1000;
  }

  /** The broker's id of the connection, once registered (for logs and tests). */
  get connectionId(): string | undefined {
    return this.#connectionId;
  }

  /** True while the broker holds this connection's current registration. */
  get up(): boolean {
    return this.#up;
  }

  /** Connects in the background; failures go to `onError` and are retried. */
  start(): void {
    void this.#connect();
  }

  /** Sends the registration again if it changed (the consumer's queues moved), or anyway with `force`. */
  registrationChanged(force = false): void {
    if (this.#ws?.readyState !== WebSocket.OPEN) return;
    const frame = this.options.registration();
    const text = JSON.stringify(frame);
    if (text === this.#lastRegistration && !force) return;
    this.#send(text);
  }

  /** Drops the connection as a network failure would (the client reconnects): for tests and chaos. */
  kill(): void {
    this.#ws?.terminate();
  }

  /** Closes for good: the broker then removes the registration (and the client from its groups). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearInterval(this.#pingTimer);
    const ws = this.#ws;
    this.#ws = undefined;
    this.#setDown();
    if (ws === undefined || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2000);
      ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      ws.close(1000);
    });
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    try {
      if (this.#url === undefined) this.#url = (await this.options.api.channelInfo()).url;
      const url = this.#url;
      if (url === null) return; // this deployment has no channel: poll, as always
      const headers = await this.options.api.transport.connectHeaders(url);
      if (this.#closed) return;
      const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000 });
      this.#ws = ws;
      ws.on("open", () => {
        this.stats.connects++;
        this.#lastRegistration = "";
        this.registrationChanged();
        this.#pingTimer = setInterval(
          () => this.#send(JSON.stringify({ type: "ping" })),
          this.options.pingIntervalMillis ?? CHANNEL_PING_INTERVAL_MS,
        );
      });
      ws.on("message", (data, isBinary) => {
        if (!isBinary) this.#receive(data.toString());
      });
      ws.on("error", (err) => this.options.onError(err, "push channel"));
      ws.on("close", () => {
        clearInterval(this.#pingTimer);
        if (this.#ws === ws) this.#ws = undefined;
        this.#setDown();
        this.#scheduleReconnect();
      });
    } catch (err) {
      this.options.onError(err, "opening the push channel");
      this.#scheduleReconnect();
    }
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    clearTimeout(this.#reconnectTimer);
    const delay = this.#reconnectDelay;
    this.#reconnectDelay = Math.min(delay * 2, MAX_RECONNECT_MS);
    this.#reconnectTimer = setTimeout(() => void this.#connect(), delay);
  }

  #send(text: string): void {
    const ws = this.#ws;
    if (ws?.readyState !== WebSocket.OPEN) return;
    if (text.startsWith('{"type":"register"')) {
      this.#lastRegistration = text;
      this.stats.registrations++;
    } else this.stats.pings++;
    ws.send(text);
  }

  #receive(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.options.onError(new Error("the push channel sent a frame that is not JSON"), "push channel");
      return;
    }
    const parsed = ServerFrameSchema.safeParse(json);
    if (!parsed.success) {
      this.options.onError(new Error(`unknown push channel frame: ${text.slice(0, 200)}`), "push channel");
      return;
    }
    const frame = parsed.data;
    const h = this.options.handlers;
    switch (frame.type) {
      case "registered":
        this.#connectionId = frame.connectionId;
        this.#reconnectDelay = this.options.reconnectMillis ?? 1000;
        this.#up = true;
        h.up();
        return;
      case "queue":
        this.stats.hints++;
        h.queue(frame);
        return;
      case "members":
        this.stats.membersHints++;
        h.members(frame.consumerGroup);
        return;
      case "checks":
        this.stats.checksHints++;
        h.checks(frame.producerGroup);
        return;
      case "register-again":
        // The broker lost this connection's registration while the socket stayed open: send it again.
        this.stats.reregistrations++;
        this.#setDown();
        this.registrationChanged(true);
        return;
      case "error":
        this.options.onError(new Error(`${frame.code}: ${frame.message}`), "push channel");
        return;
    }
  }

  #setDown(): void {
    if (!this.#up) return;
    this.#up = false;
    this.options.handlers.down();
  }
}
