/**
 * @module Telemetry, the bidirectional stream each RocketMQ 5 client keeps open: the client writes its
 * Settings, the server answers with its own (settings.ts) and registers the client (a producer of its
 * topics, a consumer of its group) as a heartbeat does; later the server pushes transaction check-backs on it
 * as `RecoverOrphanedTransactionCommand`s. Check-backs are taken as the HTTP side's producers take them (with
 * a heartbeat, `ClientService.heartbeat`): at once when the checker of this process leaves one for a client
 * here, and on every refresh (which also keeps the client live) for checks left by a checker elsewhere (a
 * scheduled function on AWS).
 *
 * Bounded: at most `maxStreams` streams (more are refused RESOURCE_EXHAUSTED), a stream without Settings
 * after `settingsTimeoutMs` is ended, Settings are acted on at most once per second per stream.
 */
import type { Broker } from "../broker/index.js";
import { BoundedMap } from "../core/bounded-map.js";
import { ErrorCode, isNimbusError } from "../core/errors.js";
import { heartbeatNeeds } from "./access.js";
import type { CallContext } from "./call-context.js";
import { okStatus, statusOfError } from "./codes.js";
import { decodeRequest } from "./decode.js";
import { GRPC_STATUS, type GrpcCall } from "./grpc-call.js";
import { encodeMessage } from "./messages.js";
import { answerSettings, type ConsumerPolicy, DEFAULT_CONSUMER_POLICY, isConsumer, registration } from "./settings.js";
import { type ClientSettings, ClientSettingsSchema, TelemetryCommandSchema } from "./wire.js";

export interface TelemetryOptions {
  /** Streams open at once, at most. Default 1000. */
  maxStreams: number;
  /** A stream must send its Settings within this. Default 10 s. */
  settingsTimeoutMs: number;
  /** How often live clients are re-registered and their check-backs taken. Default 10 s. */
  refreshMs: number;
}

export const DEFAULT_TELEMETRY_OPTIONS: TelemetryOptions = {
  maxStreams: 1000,
  settingsTimeoutMs: 10_000,
  refreshMs: 10_000,
};

type Stream = GrpcCall;

/** How long, and for how many clients at most, Settings are kept after their stream ended. */
const DEPARTED_MS = 60_000;
const MAX_DEPARTED = 1000;

interface Session {
  readonly stream: Stream;
  readonly ctx: CallContext;
  clientId: string;
  settings?: ClientSettings | undefined;
  lastSettingsAt: number;
  /** The work under way for this session (registrations, check-backs), one at a time. */
  queue: Promise<void>;
  /** A delivery of check-backs waits in `queue` already: the next reason to deliver joins it (at most one waits). */
  checksQueued?: boolean;
  settingsTimer?: NodeJS.Timeout | undefined;
}

/**
 * A newer stream of the same client id took over: the old one is no longer its client's (no Settings, no
 * check-backs) but stays open and counted against `maxStreams` until it ends, so streams opened under one id
 * cannot pass the bound.
 */
function superseded(session: Session): void {
  clearTimeout(session.settingsTimer);
  session.settings = undefined;
}

/** Ends `stream` with a gRPC status. */
const failWith = (stream: Stream, code: number, details: string) => stream.fail(code, details);

export class TelemetrySessions {
  readonly #broker: Broker;
  readonly #options: TelemetryOptions;
  readonly #policyOf: (group: string) => Promise<ConsumerPolicy>;
  readonly #open = new Set<Session>();
  readonly #byClient = new Map<string, Session>();
  /**
   * The Settings of clients whose stream ended lately (at most MAX_DEPARTED, the longest ended forgotten first;
   * read only within DEPARTED_MS): a client that leaves ends its stream and sends NotifyClientTermination at once,
   * and the termination needs them to know what to unregister, whichever of the two this server reads first.
   */
  readonly #departed = new BoundedMap<string, { settings: ClientSettings; at: number }>(MAX_DEPARTED, {
    order: "written",
  });
  readonly #timer: NodeJS.Timeout;
  readonly #onCheck = (_group: string, clientId: string) => {
    const session = this.#byClient.get(clientId);
    if (session) this.#enqueueChecks(session);
  };

  /** `policyOf`: how a consumer group is served (the POP service's), told to its consumers in Settings. */
  constructor(
    broker: Broker,
    options: Partial<TelemetryOptions> = {},
    policyOf: (group: string) => Promise<ConsumerPolicy> = async () => DEFAULT_CONSUMER_POLICY,
  ) {
    this.#broker = broker;
    this.#policyOf = policyOf;
    this.#options = { ...DEFAULT_TELEMETRY_OPTIONS, ...options };
    this.#timer = setInterval(() => this.refresh(), this.#options.refreshMs);
    this.#timer.unref();
    broker.clients.checkListeners.add(this.#onCheck);
  }

  get size(): number {
    return this.#open.size;
  }

  /** A new Telemetry stream: refused when full or without a client id, else kept until it ends. */
  open(stream: Stream, ctx: CallContext): void {
    if (stream.writableEnded) return; // cancelled before it opened: nothing to keep
    if (this.#open.size >= this.#options.maxStreams) {
      failWith(
        stream,
        GRPC_STATUS.RESOURCE_EXHAUSTED,
        `this endpoint holds ${this.#options.maxStreams} streams already`,
      );
      return;
    }
    if (ctx.clientId === undefined) {
      failWith(stream, GRPC_STATUS.INVALID_ARGUMENT, "a Telemetry stream needs an x-mq-client-id header");
      return;
    }
    const session: Session = { stream, ctx, clientId: ctx.clientId, lastSettingsAt: 0, queue: Promise.resolve() };
    session.settingsTimer = setTimeout(() => {
      if (session.settings === undefined)
        failWith(stream, GRPC_STATUS.FAILED_PRECONDITION, `no Settings within ${this.#options.settingsTimeoutMs} ms`);
    }, this.#options.settingsTimeoutMs);
    this.#open.add(session);
    const done = () => this.#forget(session);
    stream.on("data", (command: unknown) => this.#onCommand(session, command));
    stream.on("end", () => {
      done();
      stream.end();
    });
    stream.on("close", done);
    stream.on("cancelled", done);
  }

  /** Keeps every client with Settings live and takes the check-backs waiting for its producers. */
  refresh(): void {
    for (const session of this.#open) {
      if (session.settings !== undefined) this.#enqueueChecks(session);
    }
  }

  /** A Heartbeat call from `clientId`: its stream here, if any, takes its check-backs now. */
  heartbeat(clientId: string): void {
    const session = this.#byClient.get(clientId);
    if (session?.settings !== undefined) this.#enqueueChecks(session);
  }

  /** The client said it is going: its stream here stops registering it (the client ends the stream next). */
  terminated(clientId: string): void {
    this.#departed.delete(clientId);
    const session = this.#byClient.get(clientId);
    if (session === undefined) return;
    this.#byClient.delete(clientId);
    session.settings = undefined;
    clearTimeout(session.settingsTimer);
  }

  /** The Settings `clientId` last sent on a stream here (its stream open, or ended within `DEPARTED_MS`). */
  settingsOf(clientId: string): ClientSettings | undefined {
    const open = this.#byClient.get(clientId)?.settings;
    if (open !== undefined) return open;
    const departed = this.#departed.get(clientId);
    return departed !== undefined && this.#broker.now() - departed.at <= DEPARTED_MS ? departed.settings : undefined;
  }

  /** Ends every stream and waits for the work under way. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#broker.clients.checkListeners.delete(this.#onCheck);
    const pending = [...this.#open].map((s) => s.queue);
    // Ended with OK, not reset: a client reconnects (to this endpoint's successor), and one that has shut
    // down and dropped its listeners gets no error it cannot handle.
    for (const session of [...this.#open]) {
      this.#forget(session);
      if (!session.stream.writableEnded) session.stream.end();
    }
    await Promise.all(pending);
  }

  #forget(session: Session): void {
    clearTimeout(session.settingsTimer);
    this.#open.delete(session);
    if (this.#byClient.get(session.clientId) !== session) return;
    this.#byClient.delete(session.clientId);
    if (session.settings === undefined) return;
    this.#departed.set(session.clientId, { settings: session.settings, at: this.#broker.now() });
  }

  /** Queues a delivery of check-backs unless one waits already (a burst of reasons makes one delivery). */
  #enqueueChecks(session: Session): void {
    if (session.checksQueued === true) return;
    session.checksQueued = true;
    this.#enqueue(session, () => {
      session.checksQueued = false;
      return this.#deliverChecks(session);
    });
  }

  #enqueue(session: Session, work: () => Promise<void>): void {
    session.queue = session.queue.then(work).catch((err: unknown) => {
      if (this.#open.has(session)) this.#write(session, { status: statusOfError(err) });
    });
  }

  #write(session: Session, command: Record<string, unknown>): void {
    if (!this.#open.has(session) || session.stream.destroyed || session.stream.writableEnded) return;
    session.stream.write(command);
  }

  #onCommand(session: Session, raw: unknown): void {
    const command = TelemetryCommandSchema.safeParse(raw);
    // Replies to commands this server never sends (thread stack traces, verify results) are dropped.
    if (!command.success || command.data.command !== "settings") return;
    const now = this.#broker.now();
    if (now - session.lastSettingsAt < 1000) return;
    session.lastSettingsAt = now;
    const given = command.data.settings as Record<string, unknown>;
    this.#enqueue(session, async () => {
      const settings = decodeRequest(ClientSettingsSchema, given);
      await session.ctx.authorize(heartbeatNeeds(registration(session.clientId, settings)));
      // Its stream ended while the ACL was read: nothing of it is registered (it would stay for good).
      if (!this.#open.has(session)) return;
      session.settings = settings;
      clearTimeout(session.settingsTimer);
      const previous = this.#byClient.get(session.clientId);
      this.#byClient.set(session.clientId, session);
      if (previous !== undefined && previous !== session) superseded(previous);
      const group = settings.subscription?.group?.name;
      const policy = group === undefined ? DEFAULT_CONSUMER_POLICY : await this.#policyOf(group);
      // A consumer's start (the client waits for this answer) fixes its group's start on each topic it subscribes.
      if (group !== undefined && isConsumer(settings)) {
        const topics = (settings.subscription?.subscriptions ?? []).map((e) => e.topic.name);
        await Promise.all(topics.map((topic) => this.#broker.pop.start(group, topic)));
      }
      this.#write(session, { status: okStatus(), settings: answerSettings(settings, given, () => policy) });
      await this.#deliverChecks(session);
    });
  }

  /** Registers the client again (a heartbeat) and pushes the check-backs that heartbeat hands out. */
  async #deliverChecks(session: Session): Promise<void> {
    const settings = session.settings;
    if (settings === undefined || !this.#open.has(session)) return;
    const broker = this.#broker;
    const checks = await broker.clients.heartbeat(registration(session.clientId, settings));
    for (const check of checks) {
      try {
        const message = await broker.transactions.message(check.producerGroup, check.transactionId);
        this.#write(session, {
          recoverOrphanedTransactionCommand: { message: encodeMessage(message), transactionId: check.transactionId },
        });
      } catch (err) {
        // Gone with retention, or ended meanwhile: nothing to ask about.
        if (!isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) throw err;
      }
    }
  }
}
