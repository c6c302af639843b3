/**
 * @module Where a request for one broker goes: that broker's best address as the routes seen so far say
 * (writes to its master; reads to the master, or to a slave while the master does not answer), moving on to
 * the next address when one does not answer; a write for no broker in particular goes to whichever live
 * master the endpoints or, failing them, the cluster table name, round robin.
 */
import { ErrorCode, isNimbusError } from "../../core/errors.js";
import { MASTER_ID } from "../../core/topology.js";
import type { ClusterInfo } from "../../protocol/index.js";
import { BrokerAddressBook } from "./broker-addresses.js";
import { isUnreachable, type RequestOptions } from "./http-transport.js";

/** What the router asks of the API: the topic's route and the cluster table (each teaches the address book). */
export interface RouteSource {
  topicRoute(topic: string): Promise<unknown>;
  clusterInfo(): Promise<ClusterInfo>;
}

export class BrokerRouter {
  /** The brokers' addresses from the routes and cluster answers this client has seen. */
  readonly brokers = new BrokerAddressBook();
  #nextMaster = Math.floor(Math.random() * 1024);
  readonly #routes: RouteSource;

  constructor(routes: RouteSource) {
    this.#routes = routes;
  }

  /** Learns the topic's brokers' addresses; a topic without a route (yet) leaves the endpoints to answer. */
  async learnRoute(topic: string): Promise<void> {
    try {
      await this.#routes.topicRoute(topic);
    } catch (err) {
      if (!isNimbusError(err, ErrorCode.TOPIC_NOT_EXIST)) throw err;
    }
  }

  /**
   * Runs a request for one broker at its best address, moving on to the next when one does not answer
   * (master, then slaves for reads). A given `baseUrl`, or an unknown broker, leaves the choice as it is.
   */
  async atBroker<T>(
    where: { topic: string; brokerName?: string | undefined },
    access: "read" | "write",
    options: RequestOptions | undefined,
    run: (options: RequestOptions | undefined) => Promise<T>,
  ): Promise<T> {
    const { brokerName } = where;
    if (brokerName === undefined || options?.baseUrl) return run(options);
    if (this.brokers.candidates(brokerName, access).length === 0) await this.learnRoute(where.topic);
    const candidates = this.brokers.candidates(brokerName, access);
    if (candidates.length === 0) return run(options);
    try {
      return await this.#atFirstAnswering(candidates, options, run);
    } catch (err) {
      if (!isNimbusError(err, ErrorCode.WRONG_BROKER)) throw err;
      // 421: that address serves another broker now (the route moved, as after a restart on another address):
      // refresh the route once and go where it says, as RocketMQ's client refreshes its route on such an answer.
      await this.learnRoute(where.topic);
      const fresh = this.brokers.candidates(brokerName, access);
      if (fresh.length === 0 || fresh.join(" ") === candidates.join(" ")) throw err;
      return this.#atFirstAnswering(fresh, options, run);
    }
  }

  /** `run` at the first of `candidates` that answers (the others marked down), or the last failure. */
  async #atFirstAnswering<T>(
    candidates: string[],
    options: RequestOptions | undefined,
    run: (options: RequestOptions | undefined) => Promise<T>,
  ): Promise<T> {
    let lastError: unknown;
    for (const baseUrl of candidates) {
      try {
        const answer = await run({ ...options, baseUrl });
        this.brokers.markUp(baseUrl);
        return answer;
      } catch (err) {
        if (!isUnreachable(err)) throw err;
        this.brokers.markDown(baseUrl);
        lastError = err;
      }
    }
    throw lastError;
  }

  /**
   * A write for a broker (its master) or, without one, for the endpoints to place. A name server places
   * nothing (WRONG_BROKER): then the write goes to a live master of the cluster, round robin, which creates
   * an unknown topic as RocketMQ's auto-create does.
   */
  async toSomeMaster<R extends { topic: string; brokerName?: string | undefined }, T>(
    req: R,
    options: RequestOptions | undefined,
    run: (req: R, options: RequestOptions | undefined) => Promise<T>,
  ): Promise<T> {
    if (req.brokerName !== undefined || options?.baseUrl)
      return this.atBroker(req, "write", options, (o) => run(req, o));
    try {
      return await run(req, options);
    } catch (err) {
      if (!isNimbusError(err, ErrorCode.WRONG_BROKER)) throw err;
      const info = await this.#routes.clusterInfo();
      const masters = Object.values(info.brokerAddrTable)
        .filter((b) => b.brokerAddrs[String(MASTER_ID)] !== undefined)
        .map((b) => b.brokerName)
        .sort();
      let lastError: unknown = err;
      for (let i = 0; i < masters.length; i++) {
        const brokerName = masters[(this.#nextMaster++ + i) % masters.length] as string;
        try {
          return await this.atBroker({ ...req, brokerName }, "write", options, (o) => run({ ...req, brokerName }, o));
        } catch (next) {
          if (!isUnreachable(next)) throw next;
          lastError = next;
        }
      }
      throw lastError;
    }
  }
}
