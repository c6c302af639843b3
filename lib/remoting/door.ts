/**
 * @module The remoting door: RocketMQ 4.x's TCP protocol (the classic `rocketmq-client`, mqadmin) beside the HTTP
 * and gRPC doors, on the same broker. Connections come from the local server's HTTP port (sniff.ts hands over the
 * ones that start with a frame), which is the name server's address and the address of the first broker it serves;
 * each further broker of the process gets a port of its own, since a 4.x pull or offset request does not name its
 * broker: the address a client dials is what tells the brokers apart. Route answers name these addresses (per
 * broker name and broker id; brokers served by other processes keep their registered address's host and port).
 *
 * Bounded: connections (past `maxConnections` a new one is closed at once), requests in flight and queued answer
 * bytes per connection, the bytes of requests in flight across all of them (`requestBytes`, connection.ts), waiting
 * pulls (pull-waits.ts) and their wait (`maxSuspendMs`).
 */
import { createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import type { RequestBytes } from "../core/request-bytes.js";
import { PROCESS_UNTAKEN_ANSWERS, type UntakenAnswers } from "../core/untaken-answers.js";
import type { HandlerContext } from "../http/context.js";
import type { DoorView, Scope } from "./call.js";
import { takeChecks } from "./check-backs.js";
import { RequestCode } from "./codes.js";
import { Connection, type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "./connection.js";
import { PullWaits } from "./pull-waits.js";
import { hostAddress } from "./wire-message.js";

export interface RemotingDoorOptions {
  /** The broker context every request runs with (the HTTP door's). */
  context: HandlerContext;
  /** The brokers this process serves, in order: the first is the HTTP port's. */
  brokerNames: readonly string[];
  /** The host the door listens on for further brokers, and names in its answers unless `advertisedHost` is set. */
  host: string;
  /**
   * The host clients are told to dial (route answers, offset message ids): a load balancer's name when one is in
   * front (`nimbus proxy --advertised-host`). Its ports must be the door's own.
   */
  advertisedHost?: string | undefined;
  /** Fixed ports of the further brokers (default: free ports). */
  brokerPorts?: Readonly<Record<string, number>> | undefined;
  maxConnections?: number | undefined;
  limits?: Partial<ConnectionLimits> | undefined;
  /** The longest a pull is suspended waiting for messages. Default 15 s (RocketMQ's). */
  maxSuspendMs?: number | undefined;
  /** Pulls waiting at once, at most. Default 4096. */
  maxWaitingPulls?: number | undefined;
  /** TLS for the further brokers' ports (the HTTP port's server does its own), PEM: `--tls-cert`, `--tls-key`. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** The process's budget for requests' bytes in flight (the local server's, which its HTTP door shares). */
  requestBytes: RequestBytes;
  /** A frame's time to be whole from its first byte (`ConnectionLimits.receiveMs`): the local server's body timeout. */
  receiveMs?: number | undefined;
  /** Answers clients have not taken, bounded across the process (default: its ledger, the gRPC door's too). */
  untakenAnswers?: UntakenAnswers | undefined;
  /**
   * Listens a further broker's server and answers its port: the local server's `listenServer`
   * (lib/dev/placed-listen.ts), `server.listen` or, under `--workers`, through the primary that places connections.
   */
  listen: (server: Server, at: { port: number; host: string }) => Promise<number>;
}

export class RemotingDoor implements DoorView {
  readonly waits: PullWaits;
  readonly maxSuspendMs: number;
  readonly requestBytes: RequestBytes;
  readonly untakenAnswers: UntakenAnswers;
  readonly #connections = new Set<Connection>();
  readonly #ports = new Map<string, number>();
  readonly #servers: Server[] = [];
  readonly #limits: ConnectionLimits;
  readonly #maxConnections: number;
  readonly #removeListener: () => void;
  /** Client id -> the connections its heartbeats came over (the newest last). */
  readonly #byClient = new Map<string, Scope[]>();
  /** The connections whose close already forgets them in `#byClient` (one listener each). */
  readonly #watched = new WeakSet<Scope>();
  /** Closed connections whose client is being unregistered (close() waits for them). */
  readonly #leaving = new Set<Promise<void>>();
  #closing = false;
  /**
   * Told when a consumer joins or leaves a group here (`nimbus dev --workers`: the process bus tells the other
   * workers, whose doors notify their own connections through `membersChangedElsewhere`).
   */
  onMembersChanged: ((group: string) => void) | undefined;
  /** Check-backs being taken per connection (bounded: one chain per open connection). */
  readonly #taking = new Map<Scope, Promise<void>>();
  readonly #onCheck = (_group: string, clientId: string) => {
    const scope = this.#byClient.get(clientId)?.at(-1);
    if (scope === undefined) return;
    // One taking at a time per connection; its close waits for it (a re-registration after the unregistration
    // would make a gone client look live again).
    const taking = (this.#taking.get(scope) ?? Promise.resolve())
      .then(() => takeChecks(this.options.context, scope))
      .catch((err: unknown) => console.error(`nimbus remoting: check-backs for ${clientId} failed:`, err))
      .finally(() => {
        if (this.#taking.get(scope) === taking) this.#taking.delete(scope);
      });
    this.#taking.set(scope, taking);
  };

  constructor(private readonly options: RemotingDoorOptions) {
    const broker = options.context.broker;
    this.waits = new PullWaits(options.maxWaitingPulls ?? 4096, broker.queueLog.interest);
    this.maxSuspendMs = options.maxSuspendMs ?? 15_000;
    this.requestBytes = options.requestBytes;
    this.untakenAnswers = options.untakenAnswers ?? PROCESS_UNTAKEN_ANSWERS;
    this.#limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
    if (options.receiveMs !== undefined) this.#limits.receiveMs = options.receiveMs;
    this.#maxConnections = options.maxConnections ?? 1024;
    const removeAppended = broker.queueLog.onAppended((q) => this.waits.appended(q));
    broker.clients.checkListeners.add(this.#onCheck);
    this.#removeListener = () => {
      removeAppended();
      broker.clients.checkListeners.delete(this.#onCheck);
    };
  }

  get #advertised(): string {
    return this.options.advertisedHost ?? this.options.host;
  }

  /** Connections open now. */
  get connections(): number {
    return this.#connections.size;
  }

  /** The brokers this door serves, the first one's address also the name server's. */
  get brokerNames(): readonly string[] {
    return this.options.brokerNames;
  }

  /** The address clients set as their name server (`setNamesrvAddr`): the first broker's. */
  get nameServerAddress(): string {
    return `${this.#advertised}:${this.#ports.get(this.options.brokerNames[0] ?? "") ?? 0}`;
  }

  /** The port of `brokerName` (the HTTP port for the first). */
  portOf(brokerName: string): number | undefined {
    return this.#ports.get(brokerName);
  }

  /**
   * Serves the first broker on `mainPort` (the HTTP server's) and listens for each further broker; without
   * `mainPort` (`nimbus proxy`: no HTTP server), every broker gets a port of its own, the first one's also the
   * name server's.
   */
  async listen(mainPort?: number): Promise<void> {
    const [first, ...others] = this.options.brokerNames;
    if (first !== undefined && mainPort !== undefined) this.#ports.set(first, mainPort);
    for (const name of mainPort === undefined ? this.options.brokerNames : others) {
      const tls = this.options.tls;
      const server = tls
        ? createTlsServer({ cert: tls.cert, key: tls.key }, (socket) => this.accept(socket, name))
        : createServer((socket) => this.accept(socket, name));
      this.#servers.push(server);
      const at = { port: this.options.brokerPorts?.[name] ?? 0, host: this.options.host };
      this.#ports.set(name, await this.options.listen(server, at));
    }
  }

  addressOf(brokerName: string, brokerId: number, registered: string): string {
    const port = this.#ports.get(brokerName);
    const { role } = this.options.context;
    const servedHere = role.kind === "all" || (role.kind === "broker" && role.brokerId === brokerId);
    if (port !== undefined && servedHere) return `${this.#advertised}:${port}`;
    return registered.replace(/^[a-z]+:\/\//, "").replace(/\/.*$/, "");
  }

  /**
   * The connection heartbeated as `scope.clientId`; `previous`: the id it heartbeated as before, if any. A
   * connection is listed under its newest id only (one that renames itself at every heartbeat leaves nothing
   * behind), and forgotten under it once it closes.
   */
  heard(scope: Scope, previous: string | undefined): void {
    const clientId = scope.clientId;
    if (clientId === undefined || scope.closed.aborted) return;
    if (previous !== undefined && previous !== clientId) this.#forget(previous, scope);
    if (!this.#watched.has(scope)) {
      this.#watched.add(scope);
      scope.closed.addEventListener(
        "abort",
        () => scope.clientId !== undefined && this.#forget(scope.clientId, scope),
        {
          once: true,
        },
      );
    }
    const known = this.#byClient.get(clientId) ?? [];
    // Bounded: a client's connections are at most one per broker address it dialled (and closed ones leave).
    this.#byClient.set(clientId, [...known.filter((s) => s !== scope && !s.closed.aborted), scope]);
  }

  scopeOf(clientId: string): Scope | undefined {
    return this.#byClient.get(clientId)?.findLast((s) => !s.closed.aborted);
  }

  membersChanged(group: string): void {
    this.membersChangedElsewhere(group);
    this.onMembersChanged?.(group);
  }

  /** A consumer joined or left `group` in another process of this deployment: this door's consumers rebalance. */
  membersChangedElsewhere(group: string): void {
    for (const c of this.#connections) {
      const consumers = c.scope.heartbeat?.consumerDataSet ?? [];
      if (consumers.some((g) => g.groupName === group))
        c.scope.notify(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { consumerGroup: group });
    }
  }

  #forget(clientId: string, scope: Scope): void {
    const list = this.#byClient.get(clientId)?.filter((s) => s !== scope);
    if (list === undefined || list.length === 0) this.#byClient.delete(clientId);
    else this.#byClient.set(clientId, list);
  }

  /**
   * A connection a client heartbeated over closed. When it was the client's last one here, the client is gone
   * (killed, or its connections dropped) as RocketMQ's broker sees a closed channel: it is unregistered from the
   * groups of its last heartbeat, so check-backs go to another producer of its group at once and the group's
   * other consumers rebalance now, instead of both waiting for its heartbeats to age out (120 s).
   */
  async #closed(connection: Connection): Promise<void> {
    const scope = connection.scope;
    // Its requests (a heartbeat being registered) and check-backs being taken are written first.
    await connection.settled();
    await this.#taking.get(scope);
    const hb = scope.heartbeat;
    const clientId = hb?.clientId;
    if (this.#closing || hb === undefined || clientId === undefined || this.#byClient.has(clientId)) return;
    const { broker } = this.options.context;
    const producers = (hb.producerDataSet ?? []).map((p) => p.groupName);
    const consumers = (hb.consumerDataSet ?? []).map((c) => c.groupName);
    try {
      await Promise.all([
        ...producers.map((producerGroup) => broker.clients.unregister(clientId, { producerGroup })),
        ...consumers.map((consumerGroup) => broker.clients.unregister(clientId, { consumerGroup })),
      ]);
      for (const group of consumers) {
        await broker.channel.groupChanged(group);
        if (!this.#closing) this.membersChanged(group);
      }
    } catch (err) {
      console.error(`nimbus remoting: unregistering ${clientId} failed:`, err);
    }
  }

  /** Takes a connection (its first bytes already read, when a sniffing server handed it over). */
  accept(socket: Socket, brokerName?: string, first?: Buffer): void {
    // A closing door takes no connection: close() waits only for the ones it found.
    if (this.#closing || this.#connections.size >= this.#maxConnections) {
      socket.destroy();
      return;
    }
    const name = brokerName ?? this.options.brokerNames[0] ?? "";
    const port = socket.localPort ?? this.#ports.get(name) ?? 0;
    const connection = new Connection(
      socket,
      () => this.options.context,
      this,
      {
        brokerName: name,
        storeHost: hostAddress(this.#advertised, port),
        remote: hostAddress(socket.remoteAddress ?? "", socket.remotePort ?? 0),
      },
      this.#limits,
    );
    this.#connections.add(connection);
    void connection.done.then(() => {
      this.#connections.delete(connection);
      if (this.#closing) return;
      const left = this.#closed(connection).finally(() => this.#leaving.delete(left));
      this.#leaving.add(left);
    });
    if (first !== undefined && first.byteLength > 0) connection.receive(first);
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#removeListener();
    for (const server of this.#servers) server.close();
    // Closing the sockets ends the waiting pulls; what the handlers still do finishes before the store closes.
    const open = [...this.#connections];
    for (const c of open) c.close();
    await Promise.all(open.map((c) => c.done));
    await Promise.all(open.map((c) => c.settled()));
    await Promise.all(this.#leaving);
  }
}
