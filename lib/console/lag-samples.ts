/**
 * @module Lag samples of a consumer group: the broker's (one a minute for the last day, `GET
 * /groups/{group}/lag-history`, loaded when the page opens) merged with those the group view takes while it is
 * open, which are kept in the browser's localStorage so the chart also shows earlier visits' finer samples.
 */

export interface LagSample {
  /** When the sample was taken (ms since the epoch). */
  at: number;
  /** Total lag: the sum of the consumerProgress diffs. */
  lag: number;
}

/** At most this many samples per group (a day at one sample per 30 s). */
export const MAX_SAMPLES = 2880;
const PREFIX = "nimbus-console-lag:";

function key(apiUrl: string, group: string): string {
  return `${PREFIX}${apiUrl}|${group}`;
}

export function loadSamples(apiUrl: string, group: string): LagSample[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(key(apiUrl, group)) ?? "[]");
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (s): s is LagSample => typeof s === "object" && s !== null && Number.isFinite(s.at) && Number.isFinite(s.lag),
    );
  } catch {
    return [];
  }
}

/** The samples with `sample` appended (oldest dropped past MAX_SAMPLES), saved. */
export function appendSample(apiUrl: string, group: string, samples: LagSample[], sample: LagSample): LagSample[] {
  const next = [...samples, sample].slice(-MAX_SAMPLES);
  try {
    localStorage.setItem(key(apiUrl, group), JSON.stringify(next));
  } catch {
    // A full or disabled localStorage: the chart still shows this visit's samples.
  }
  return next;
}

/** The broker's samples and the browser's, in time order, one per instant (the broker's where both have one). */
export function mergeSamples(broker: readonly LagSample[], local: readonly LagSample[]): LagSample[] {
  const byTime = new Map<number, LagSample>();
  for (const s of local) byTime.set(s.at, s);
  for (const s of broker) byTime.set(s.at, s);
  return [...byTime.values()].sort((a, b) => a.at - b.at).slice(-2 * MAX_SAMPLES);
}

export function clearSamples(apiUrl: string, group: string): void {
  localStorage.removeItem(key(apiUrl, group));
}

const RECENT_KEY = "nimbus-console-recent-groups";

/** Groups opened before, most recent first. */
export function recentGroups(): string[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(RECENT_KEY) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((g): g is string => typeof g === "string") : [];
  } catch {
    return [];
  }
}

export function rememberGroup(group: string): void {
  const next = [group, ...recentGroups().filter((g) => g !== group)].slice(0, 20);
  localStorage.setItem(RECENT_KEY, JSON.stringify(next));
}
