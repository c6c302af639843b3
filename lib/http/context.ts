/** @module What every route gets: the broker, built once per process (per Lambda container, or by the local server). */
import type { Broker } from "../broker/broker.js";

export interface HandlerContext {
  broker: Broker;
}
