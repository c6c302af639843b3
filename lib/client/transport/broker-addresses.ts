/**
 * @module Where each broker is served, as the routes say (RocketMQ's `brokerAddrTable` in the client), and
 * which address to try first: the master for writes; for reads the master, or its slaves while the master
 * does not answer (RocketMQ's `suggestWhichBrokerId` idea). An address that failed to answer is tried last
 * for `downMs`, then first again, so reads go back to a master that returns.
 *
 * @example
 * const book = new BrokerAddressBook();
 * book.learn(route);
 * book.candidates("broker-a", "read"); // ["http://master", "http://slave-1"]
 */
import { MASTER_ID } from "../../core/topology.js";
import type { BrokerData } from "../../protocol/index.js";

export class BrokerAddressBook {
  readonly #brokers = new Map<string, Record<string, string>>();
  readonly #downUntil = new Map<string, number>();

  constructor(
    /** How long an address that did not answer goes to the back of the line. Default 5000 ms. */
    readonly downMs = 5000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the addresses of a route's or the cluster's brokers (the newest answer wins). */
  learn(brokerDatas: Iterable<BrokerData>): void {
    for (const b of brokerDatas) this.#brokers.set(b.brokerName, { ...b.brokerAddrs });
  }

  /**
   * The addresses to try for `brokerName`, best first: its master for a write; for a read its master, then
   * its slaves by id, with those that failed lately moved to the end. Empty when the broker is unknown.
   */
  candidates(brokerName: string, access: "read" | "write"): string[] {
    const addrs = this.#brokers.get(brokerName);
    if (addrs === undefined) return [];
    const byId = Object.entries(addrs)
      .filter(([id]) => access === "read" || id === String(MASTER_ID))
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([, address]) => address);
    const now = this.now();
    const up = byId.filter((a) => (this.#downUntil.get(a) ?? 0) <= now);
    const down = byId.filter((a) => (this.#downUntil.get(a) ?? 0) > now);
    return [...new Set([...up, ...down])];
  }

  /** The address did not answer: try the others first for a while. */
  markDown(address: string): void {
    this.#downUntil.set(address, this.now() + this.downMs);
  }

  /** The address answered. */
  markUp(address: string): void {
    this.#downUntil.delete(address);
  }
}
