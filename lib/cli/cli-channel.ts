/**
 * @module `nimbus consume`'s push channel (docs/push-channel.md): the SDK's channel client, with what the
 * CLI's single loop needs — a wait that a hint for a held queue (or a `members` hint, or a new registration)
 * ends early, a flag saying the group changed, and counters. While it is down the loop polls as before.
 */

import type { NimbusApi } from "../client/transport/index.js";
import { PushChannelClient } from "../client/transport/index.js";
import type { MessageQueue } from "../core/message-queue.js";
import { sleep } from "../core/sleep.js";
import type { HeartbeatData } from "../protocol/index.js";

export interface CliChannelStats {
  hints: number;
  /** Hints for queues this consumer does not hold. */
  ignoredHints: number;
  /** Waits a hint ended early, and waits that ran out. */
  wokenByHint: number;
  wokenByTimer: number;
  /** Rounds that found messages, by what ended the wait before them. */
  foundAfterHint: number;
  foundAfterTimer: number;
}

export class CliChannel {
  readonly #client: PushChannelClient;
  #wake = new AbortController();
  #membersChanged = false;
  readonly stats: CliChannelStats = {
    hints: 0,
    ignoredHints: 0,
    wokenByHint: 0,
    wokenByTimer: 0,
    foundAfterHint: 0,
    foundAfterTimer: 0,
  };
  #lastWake: "hint" | "timer" | "none" = "none";

  constructor(
    api: NimbusApi,
    heartbeat: () => HeartbeatData,
    held: () => MessageQueue[],
    onError: (err: unknown, what: string) => void,
  ) {
    this.#client = new PushChannelClient({
      api,
      registration: () => ({
        type: "register",
        heartbeat: heartbeat(),
        queues: held().map((mq) => ({ topic: mq.topic, brokerName: mq.brokerName, queueId: mq.queueId })),
      }),
      handlers: {
        queue: (hint) => {
          this.stats.hints++;
          if (
            held().some(
              (mq) => mq.topic === hint.topic && mq.brokerName === hint.brokerName && mq.queueId === hint.queueId,
            )
          )
            this.#wake.abort();
          else this.stats.ignoredHints++;
        },
        members: () => {
          this.#membersChanged = true;
          this.#wake.abort();
        },
        checks: () => {},
        up: () => this.#wake.abort(),
        down: () => {},
      },
      onError,
    });
    this.#client.start();
  }

  get up(): boolean {
    return this.#client.up;
  }

  /** True once after a `members` hint: the loop rebalances. */
  takeMembersChanged(): boolean {
    const changed = this.#membersChanged;
    this.#membersChanged = false;
    return changed;
  }

  /** The held queues changed. */
  registrationChanged(): void {
    this.#client.registrationChanged();
  }

  /** Waits `ms`, or less when a hint comes (or `signal` aborts). */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    this.#wake = new AbortController();
    const slept = await sleep(ms, AbortSignal.any([signal, this.#wake.signal]));
    this.#lastWake = slept ? "timer" : signal.aborted ? "none" : "hint";
    if (this.#lastWake === "timer") this.stats.wokenByTimer++;
    if (this.#lastWake === "hint") this.stats.wokenByHint++;
  }

  /** The round after the last wait found messages. */
  found(): void {
    if (this.#lastWake === "hint") this.stats.foundAfterHint++;
    if (this.#lastWake === "timer") this.stats.foundAfterTimer++;
    this.#lastWake = "none";
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
