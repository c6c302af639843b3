/**
 * @module What an open-loop run asks of the machine's CPU: each side's CPU per request, and the cores the offered
 * rate needs at those costs. A client and a broker that share a machine can only keep an offered rate when the two
 * together need fewer cores than the machine has; past that the client falls behind its own schedule, and its
 * answer times grow with its own lag, whatever the broker does (docs/benchmarks/http-clients.md).
 */

export interface CpuBudget {
  /** The client's CPU per request it made (µs), its process's start included. */
  clientUsPerRequest: number;
  /** The broker's CPU per request it was sent (µs), over the row's span. */
  brokerUsPerRequest: number;
  /** The cores the offered rate needs at these costs: (client + broker) µs × requests per second. */
  coresNeeded: number;
  /** The cores this process may use. */
  cores: number;
}

/**
 * `requests`: what the client sent (answered or not); `offeredPerSec`: the rate it was asked to keep. NaN costs when
 * it sent nothing.
 */
export function cpuBudget(
  offeredPerSec: number,
  requests: number,
  clientCpuSeconds: number,
  brokerCpuSeconds: number,
  cores: number,
): CpuBudget {
  const perRequest = (seconds: number) => (requests > 0 ? (seconds * 1e6) / requests : Number.NaN);
  const clientUsPerRequest = perRequest(clientCpuSeconds);
  const brokerUsPerRequest = perRequest(brokerCpuSeconds);
  return {
    clientUsPerRequest,
    brokerUsPerRequest,
    coresNeeded: ((clientUsPerRequest + brokerUsPerRequest) * offeredPerSec) / 1e6,
    cores,
  };
}

/** One line for the bench's output: the costs and whether the machine has the cores the rate needs. */
export function describeCpuBudget(row: string, offeredPerSec: number, b: CpuBudget): string {
  const us = (n: number) => (Number.isNaN(n) ? "–" : `${Math.round(n).toLocaleString("en-US")} µs`);
  const head = `${row}: CPU per request: client ${us(b.clientUsPerRequest)}, broker ${us(b.brokerUsPerRequest)}`;
  if (Number.isNaN(b.coresNeeded)) return `${head}; nothing sent`;
  const needs = `${offeredPerSec.toLocaleString("en-US")}/s needs ${b.coresNeeded.toFixed(2)} of the machine's ${b.cores} cores`;
  return b.coresNeeded > b.cores
    ? `${head}; ${needs}: more than it has, so the client cannot keep its schedule whatever the broker does`
    : `${head}; ${needs}`;
}
