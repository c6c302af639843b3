/**
 * @module When a POP group started consuming a topic: one item per (group, topic) in the `pop` table,
 * `popgroup:<G>:<T>` / `start`, written by the group's first receive, its subscription or its consumer's start
 * (whichever comes first), for every queue of the topic at once. A queue the group never received from starts
 * at the first message stored from then on (lib/broker/pop/queue-pop.ts `startOffset`), so a message sent after
 * the consumer started is delivered, whatever queue or broker it lands on and whenever that queue is first read.
 *
 * The start lives as long as the group's other POP state: `until` (and the TTL attribute) is the retention
 * after the last refresh, and a process refreshes it at most once an hour while the group receives. A start
 * past its `until` counts as absent (DynamoDB's TTL deletes hours late): a group idle for the retention starts
 * anew.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { ConditionFailedError, type Table } from "../../storage/table.js";

const START_SK = "start";
/** A process rewrites a live start's `until` when its last refresh is older than this. */
export const GROUP_START_REFRESH_MS = 3600_000;
/** (group, topic) pairs whose start a process remembers; the oldest is forgotten past this. */
const MAX_CACHED = 10_000;

export const groupStartPk = (group: string, topic: string): string => `popgroup:${group}:${topic}`;

interface KnownStart {
  startedAt: number;
  /** When the stored start lapses unless refreshed (ms). */
  until: number;
}

export class GroupStarts {
  readonly #known = new BoundedMap<string, KnownStart>(MAX_CACHED);

  constructor(
    private readonly table: Table,
    private readonly retentionMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * When `group` started on `topic`: the stored start, or now when there is none (stored first; of processes
   * starting a group at once, one start wins and every one answers it). Free while this process knows it.
   */
  async startedAt(group: string, topic: string): Promise<number> {
    const pk = groupStartPk(group, topic);
    const now = this.now();
    const known = this.#known.get(pk);
    if (known !== undefined && known.until > now) {
      if (known.until - now < this.retentionMs - GROUP_START_REFRESH_MS) await this.#refresh(pk, known, now);
      return known.startedAt;
    }
    const stored = await this.table.get({ pk, sk: START_SK }, { consistent: true });
    if (stored !== undefined && Number(stored.until) > now) {
      return this.#remember(pk, { startedAt: Number(stored.startedAt), until: Number(stored.until) });
    }
    const start = { startedAt: now, until: now + this.retentionMs };
    try {
      // Condition: no live start is stored (none, or one whose `until` has passed): a group has one start at a
      // time, and of first receivers racing exactly one writes it.
      await this.table.put(
        { pk, sk: START_SK, ...start, expiresAt: Math.floor(start.until / 1000) },
        { condition: { absentOrUntilBefore: now }, returnExistingOnFailure: true },
      );
      return this.#remember(pk, start);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const winner = err.existing ?? (await this.table.get({ pk, sk: START_SK }, { consistent: true }));
      if (winner === undefined) throw err;
      return this.#remember(pk, { startedAt: Number(winner.startedAt), until: Number(winner.until) });
    }
  }

  /**
   * Unconditional: only ever called while the start this process knows is live (its `until` is ahead), so the
   * stored item is that start (a start is replaced only after it lapsed); the write only moves `until` on.
   */
  async #refresh(pk: string, known: KnownStart, now: number): Promise<void> {
    const until = now + this.retentionMs;
    await this.table.put({ pk, sk: START_SK, startedAt: known.startedAt, until, expiresAt: Math.floor(until / 1000) });
    known.until = until;
  }

  #remember(pk: string, start: KnownStart): number {
    this.#known.set(pk, start);
    return start.startedAt;
  }
}
