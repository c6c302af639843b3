/**
 * @module Time shared by the broker's time-keyed records: how long one run may hold a lease, and the sortable
 * form of a due time that the timer store and the transaction checker both key their pending entries by.
 */

/** The longest a request or a scheduled run can take (API Gateway stops at 30 s, the check function at 60 s). */
export const MAX_RUN_MS = 60_000;

const PAD = 15;

/** A due time (ms) as a fixed-width sort key: keys sort as their times do. */
export const dueKey = (dueAt: number): string => String(Math.max(0, Math.floor(dueAt))).padStart(PAD, "0");
