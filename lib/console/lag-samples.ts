/**
 * @module Lag samples of a consumer group: taken by the group view while it is open, kept in the browser's
 * localStorage so the chart shows the history of earlier visits too. The broker keeps no samples
 * (docs/console.md says why: a server-side sampler would cost storage requests every period, watched or not).
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

export function clearSamples(apiUrl: string, group: string): void {
  localStorage.removeItem(key(apiUrl, group));
}

const RECENT_KEY = "nimbus-console-recent-groups";

/** Groups opened before, most recent first (the API has no list of groups). */
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
