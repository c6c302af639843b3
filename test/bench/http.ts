/**
 * @module The benchmark's HTTP client: JSON over `fetch` on loopback, as an application would call the
 * API (docs/api.md), with the shapes of the answers the benchmark reads.
 */

export interface SendAnswer {
  sendStatus: string;
  messageQueue: { topic: string; brokerName: string; queueId: number };
  queueOffset: number;
  msgIds: string[];
}

export interface PulledMessage {
  msgId: string;
  queueOffset: number;
  body: string;
}

export interface PullAnswer {
  pullStatus: "FOUND" | "NO_NEW_MSG" | "NO_MATCHED_MSG" | "OFFSET_ILLEGAL";
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  messages: PulledMessage[];
}

export interface PullRequest {
  consumerGroup: string;
  topic: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  maxMsgNums: number;
}

export interface Answer<T> {
  ok: boolean;
  status: number;
  body: T;
  /** Request start to the end of reading and parsing the response body. */
  elapsedMs: number;
}

/** One API call; a non-2xx answer is returned (not thrown) so a run can count errors and go on. */
export async function call<T>(
  baseUrl: string,
  method: "GET" | "POST" | "PUT",
  path: string,
  body?: string,
): Promise<Answer<T>> {
  const started = performance.now();
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(30_000),
  });
  const parsed = (await res.json()) as T;
  return { ok: res.ok, status: res.status, body: parsed, elapsedMs: performance.now() - started };
}

/** Throws with the server's answer unless the call succeeded: for setup steps, not for measured calls. */
export async function mustCall<T>(
  baseUrl: string,
  method: "GET" | "POST" | "PUT",
  path: string,
  body?: unknown,
): Promise<T> {
  const answer = await call<T>(baseUrl, method, path, body === undefined ? undefined : JSON.stringify(body));
  if (!answer.ok) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The JSON body of a `POST /send` of `batch` copies of `payload` (each message gets its own id from the broker). */
export function sendBody(topic: string, batch: number, payload: Buffer, keyed = false): string {
  const body = payload.toString("base64");
  return JSON.stringify({
    producerGroup: "bench_producer",
    topic,
    messages: Array.from({ length: batch }, (_, i) => (keyed ? { body, keys: [`order-${i}`] } : { body })),
  });
}
