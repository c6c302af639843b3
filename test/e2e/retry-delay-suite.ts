/**
 * @module E2E cases of retries, dead letters and delayed messages, through the SDK like a user: a
 * RECONSUME_LATER message comes back through `%RETRY%<group>` with reconsumeTimes 0, 1, 2 while the original
 * queue's offset moves on; one that always fails ends in `%DLQ%<group>` after maxReconsumeTimes; a consumer
 * restarted meanwhile loses nothing; BROADCASTING drops (and reports) a failed message; a delay level and a
 * deliver time are stored only when due; 1,000 messages due in one second arrive once each; bad input is
 * refused with a 4xx and writes nothing. The deployment's delay levels are short ("1s 2s 2s") so the cases
 * do not wait minutes; visibility is asserted by state (a message's store time is never before its due
 * time), never by timing precision (that is `npm run bench`).
 */
import type { ServerMode } from "../support/server-fixture.js";
import { delayCases } from "./delay-suite.js";
import { retryDelayFixture } from "./retry-delay-fixture.js";
import { retryCases } from "./retry-suite.js";

export { FAST_DELAY_LEVELS } from "./retry-delay-fixture.js";

export function retryDelayCases(mode: ServerMode): void {
  const fixture = retryDelayFixture(mode);
  retryCases(fixture);
  delayCases(fixture);
}
