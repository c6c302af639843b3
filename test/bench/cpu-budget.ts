/**
 * @module What an open-loop run of the plain-http bench asked of the machine's CPU: each side's CPU per request, and
 * the cores the offered rate needs at those costs, the client's alone and the two together. A client and a broker
 * that share a machine can only keep an offered rate when together they need fewer cores than it has. The costs are
 * the run's own: a client that fell behind its schedule sent in bursts, over more connections, and that costs both
 * sides more than an even pace would (docs/benchmarks/http-clients.md).
 */

export interface CpuBudgetInput {
  /** The rate the client was asked to keep (requests per second). */
  offeredPerSec: number;
  /** What the client sent, answered or not. */
  requestsSent: number;
  /** What the broker answered (OK, refused or other): the requests it served or refused. */
  requestsAnswered: number;
  /** The client's process's CPU over its life (its start included). */
  clientCpuSeconds: number;
  /** The broker's processes' CPU over the client's run. */
  brokerCpuSeconds: number;
  /** The cores this process may run on (the machine's, unless it is restricted). */
  cores: number;
}

export interface CpuBudget {
  /** The rate the client was asked to keep, which the cores below are for. */
  offeredPerSec: number;
  /** The client's CPU per request it sent (µs), its process's start included. */
  clientUsPerRequest: number;
  /** The broker's CPU per request it answered (µs), over the client's run. */
  brokerUsPerRequest: number;
  /** The cores the client alone needs for the offered rate at its cost. */
  clientCoresNeeded: number;
  /** The cores client and broker together need for the offered rate at these costs. */
  coresNeeded: number;
  cores: number;
}

/** The budget of one row; NaN costs when nothing was sent or answered. */
export function cpuBudget(input: CpuBudgetInput): CpuBudget {
  const perRequest = (seconds: number, requests: number) => (requests > 0 ? (seconds * 1e6) / requests : Number.NaN);
  const clientUsPerRequest = perRequest(input.clientCpuSeconds, input.requestsSent);
  const brokerUsPerRequest = perRequest(input.brokerCpuSeconds, input.requestsAnswered);
  return {
    offeredPerSec: input.offeredPerSec,
    clientUsPerRequest,
    brokerUsPerRequest,
    clientCoresNeeded: (clientUsPerRequest * input.offeredPerSec) / 1e6,
    coresNeeded: ((clientUsPerRequest + brokerUsPerRequest) * input.offeredPerSec) / 1e6,
    cores: input.cores,
  };
}

/**
 * One line for the bench's output: the costs, and for a row at a fixed rate the cores it needs. `withCores` false
 * (the overload row, whose rate is a multiple of the capacity by design and whose broker cost mixes answers with
 * refusals): the costs only.
 */
export function describeCpuBudget(rowName: string, budget: CpuBudget, withCores = true): string {
  const formatMicros = (n: number) => (Number.isNaN(n) ? "–" : `${Math.round(n).toLocaleString("en-US")} µs`);
  const client = formatMicros(budget.clientUsPerRequest);
  const head = `${rowName}: CPU per request: client ${client}, broker ${formatMicros(budget.brokerUsPerRequest)}`;
  if (Number.isNaN(budget.coresNeeded)) return `${head}; nothing sent or answered`;
  if (!withCores) return head;
  const rate = budget.offeredPerSec.toLocaleString("en-US");
  const needs = `at these costs ${rate}/s needs ${budget.clientCoresNeeded.toFixed(2)} cores for the client alone`;
  const together = `${budget.coresNeeded.toFixed(2)} with the broker, of the machine's ${budget.cores} cores`;
  const over = budget.coresNeeded > budget.cores ? ": more than it has, so the rate cannot be kept" : "";
  return `${head}; ${needs}, ${together}${over}`;
}
