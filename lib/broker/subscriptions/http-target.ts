/**
 * @module An HTTPS target: `POST` of the delivery body, signed (`x-nimbus-signature`, lib/core/delivery-signature.ts),
 * bounded by the subscription's timeout (one deadline over connect, head and body), redirects never followed
 * (a 3xx is a failed delivery: a signed body is for the URL its owner registered, nowhere else), the answer
 * read at most MAX_TARGET_ANSWER_BYTES. The connection pool, and so the certificates trusted, is target-agent.ts's.
 */
import { isIP } from "node:net";
import { type Dispatcher, request } from "undici";
import { DELIVERY_SIGNATURE_HEADER, signDelivery } from "../../core/delivery-signature.js";
import { addressProblem, type TargetNetworks } from "../../core/target-address.js";
import { MAX_TARGET_ANSWER_BYTES } from "../../protocol/index.js";
import { type DeliveryOutcome, type DeliveryTarget, failure, readPartialFailures } from "./delivery.js";

export class HttpTarget implements DeliveryTarget {
  constructor(
    private readonly url: string,
    private readonly secret: string,
    private readonly timeoutMs: number,
    /** The pool: `targetAgent(networks)`, which refuses a name that resolves to an address `networks` does not allow. */
    private readonly agent: Dispatcher,
    private readonly networks: TargetNetworks,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async deliver(body: string, signal: AbortSignal): Promise<DeliveryOutcome> {
    // An address in the URL is dialled without a lookup: checked here, before anything (the signature) is sent.
    const host = new URL(this.url).hostname;
    const refused = isAddress(host) ? addressProblem(host, this.networks) : undefined;
    if (refused !== undefined) return failure(`the target is refused: ${refused}`);
    // A sealed secret this process cannot open reads as "": a body signed with an empty key is never sent.
    if (this.secret === "")
      return failure(
        "the signing secret does not open here (no seal key, or another one): save the subscription again",
      );
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]);
    const ids = new Set((JSON.parse(body) as { Records: { messageId: string }[] }).Records.map((r) => r.messageId));
    try {
      const answer = await request(this.url, {
        method: "POST",
        dispatcher: this.agent,
        signal: deadline,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        headers: {
          "content-type": "application/json",
          "user-agent": "nimbus-dispatcher",
          [DELIVERY_SIGNATURE_HEADER]: signDelivery(this.secret, body, this.nowSeconds()),
        },
        body,
      });
      const text = await readBounded(answer.body);
      if (answer.statusCode >= 300 && answer.statusCode < 400)
        return failure(`the target answered ${answer.statusCode}: redirects are not followed`);
      if (answer.statusCode < 200 || answer.statusCode >= 300)
        return failure(`the target answered ${answer.statusCode}`);
      return readPartialFailures(text ?? "", ids, true);
    } catch (err) {
      if (deadline.aborted && !signal.aborted) return failure(`no answer within ${this.timeoutMs} ms`);
      return failure(`the target could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/** The answer's text, or undefined past the bound (the rest is dropped: a partial failure list is small). */
async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > MAX_TARGET_ANSWER_BYTES) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const isAddress = (hostname: string): boolean => isIP(hostname.replace(/^\[|\]$/g, "")) !== 0;
