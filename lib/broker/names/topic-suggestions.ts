/**
 * @module "Did you mean": the existing topic closest to a name that does not exist, for read-side TOPIC_NOT_EXIST
 * answers (a typo in a consumer's topic otherwise reads as an empty topic that never fills). The topic list is read
 * at most once per `LIST_REUSE_MS` per process and only on a miss, so a client asking for unknown topics costs at
 * most one list query per period.
 */

/** How long a read topic list serves suggestions. */
export const LIST_REUSE_MS = 10_000;
/** Topic names are at most 127 characters; anything longer is not compared. */
const MAX_COMPARED_LENGTH = 127;

/** Levenshtein distance of `a` and `b`, giving up (answering `limit + 1`) once it must exceed `limit`. */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const d = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    previous = row;
  }
  return previous[b.length] ?? limit + 1;
}

/**
 * The existing topic most like `topic`: the same but for letter case, else the nearest within a quarter of the
 * name's length (at least 1, at most 3 edits); undefined when none is that close.
 */
export function closestTopic(topic: string, existing: readonly string[]): string | undefined {
  if (topic.length > MAX_COMPARED_LENGTH) return undefined;
  const lower = topic.toLowerCase();
  const sameButCase = existing.find((t) => t !== topic && t.toLowerCase() === lower);
  if (sameButCase !== undefined) return sameButCase;
  const limit = Math.min(3, Math.max(1, Math.floor(topic.length / 4)));
  let best: { topic: string; distance: number } | undefined;
  for (const candidate of existing) {
    if (candidate === topic || candidate.length > MAX_COMPARED_LENGTH) continue;
    const distance = editDistance(lower, candidate.toLowerCase(), limit);
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { topic: candidate, distance };
  }
  return best?.topic;
}

/** Suggestions from a topic list read at most once per `LIST_REUSE_MS` (`list` reads it). */
export class TopicSuggestions {
  #list: { topics: readonly string[]; at: number } | undefined;

  constructor(
    private readonly list: () => Promise<string[]>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The existing topic closest to `topic`, or undefined (also when the list cannot be read now). */
  async closestTo(topic: string): Promise<string | undefined> {
    if (this.#list === undefined || this.now() - this.#list.at >= LIST_REUSE_MS) {
      try {
        this.#list = { topics: await this.list(), at: this.now() };
      } catch {
        return undefined;
      }
    }
    return closestTopic(topic, this.#list.topics);
  }
}
