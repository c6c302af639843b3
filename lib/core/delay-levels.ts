/**
 * @module RocketMQ's delay levels (`messageDelayLevel`): a blank-separated list of durations, level 1 first,
 * each a whole number followed by `ms`, `s`, `m`, `h` or `d`. The default is RocketMQ's 18 levels; a
 * deployment may set its own (`--message-delay-level "1s 2s 3s"` for the local broker).
 *
 * @example
 * parseDelayLevels("1s 5s 2m"); // [1000, 5000, 120000]
 */
import { ErrorCode, NimbusError } from "./errors.js";
import { MessageConst } from "./message.js";

/** RocketMQ's default `messageDelayLevel`. */
export const DEFAULT_MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h";

/** A retry's level: RocketMQ sends the n-th failure back with level 3 + reconsumeTimes. */
export const RETRY_BASE_DELAY_LEVEL = 3;

/** The properties that delay a message: a delay level, or RocketMQ 5's timer properties. */
export const TIMER_PROPERTIES = [
  MessageConst.DELAY,
  MessageConst.TIMER_DELIVER_MS,
  MessageConst.TIMER_DELAY_SEC,
  MessageConst.TIMER_DELAY_MS,
] as const;

/** Whether `properties` delay their message. */
export const isDelayed = (properties: Readonly<Record<string, string>> | undefined): boolean =>
  properties !== undefined && TIMER_PROPERTIES.some((p) => properties[p] !== undefined);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The delay of each level in ms (index 0 is level 1). Throws PARAMETER_ILLEGAL on a bad list. */
export function parseDelayLevels(text: string): number[] {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((w) => w.length > 0);
  if (words.length === 0) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "messageDelayLevel has no level");
  return words.map((word) => {
    const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(word);
    const unit = m ? UNIT_MS[m[2] as string] : undefined;
    if (!m || unit === undefined || Number(m[1]) === 0) {
      throw new NimbusError(
        ErrorCode.PARAMETER_ILLEGAL,
        `messageDelayLevel: "${word}" is not a positive duration like 500ms, 1s, 2m, 1h or 1d`,
      );
    }
    return Number(m[1]) * unit;
  });
}
