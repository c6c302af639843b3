/**
 * @module RocketMQ's `PermName`: the permission bits of a topic's QueueData on a broker and of a broker
 * itself. `perm` 6 (read + write) is the default of a new topic.
 */

const PERM_PRIORITY = 8;
const PERM_READ = 4;
const PERM_WRITE = 2;
const PERM_INHERIT = 1;
const ALL_BITS = PERM_PRIORITY | PERM_READ | PERM_WRITE | PERM_INHERIT;

/** Read + write (6): the permission of a new topic and of a broker unless configured otherwise. */
export const DEFAULT_PERM = PERM_READ | PERM_WRITE;

/**
 * Permission bits and their tests, shaped like RocketMQ's static class.
 *
 * @example
 * PermName.isWriteable(6); // true
 * PermName.perm2String(6); // "RW-"
 */
export const PermName = {
  PERM_PRIORITY,
  PERM_READ,
  PERM_WRITE,
  PERM_INHERIT,

  isReadable: (perm: number): boolean => (perm & PERM_READ) === PERM_READ,
  isWriteable: (perm: number): boolean => (perm & PERM_WRITE) === PERM_WRITE,
  isInherited: (perm: number): boolean => (perm & PERM_INHERIT) === PERM_INHERIT,
  isPriority: (perm: number): boolean => (perm & PERM_PRIORITY) === PERM_PRIORITY,

  /**
   * An integer from 0 to 15: any combination of the four bits, and nothing else. RocketMQ's own
   * `isValid` is stricter (`0 <= perm < PERM_PRIORITY`, refusing the priority bit).
   */
  isValid: (perm: number): boolean => Number.isInteger(perm) && perm >= 0 && perm <= ALL_BITS,

  /**
   * RocketMQ's three-letter form: `R` or `-`, `W` or `-`, `X` (inherit) or `-`. Like RocketMQ's, it does
   * not show the priority bit: 14 and 6 both print "RW-".
   */
  perm2String: (perm: number): string =>
    (PermName.isReadable(perm) ? "R" : "-") +
    (PermName.isWriteable(perm) ? "W" : "-") +
    (PermName.isInherited(perm) ? "X" : "-"),
} as const;
