/**
 * @module The scheduled functions of manifest.ts on EventBridge: broker registration every minute (the
 * name server expires a broker 120 s after its last registration), transaction check-backs every minute and
 * hourly retention.
 */
import { api } from "./api.js";
import { settings } from "./config.js";
import { createFunction } from "./functions.js";
import { SCHEDULED_FUNCTIONS } from "./manifest.js";

/**
 * A slave cell runs only its broker's registration: retention and check-backs are the master stage's (the
 * cell's tables are the master's replicas, and a delete there would replicate back).
 */
const scheduled = Object.entries(SCHEDULED_FUNCTIONS).filter(
  ([name]) => settings.cell === undefined || name === "RegisterBrokers",
);

export const schedules = scheduled.map(([name, spec]) => {
  const fn = createFunction(name, spec, api.url);
  return new sst.aws.Cron(`${name}Schedule`, { schedule: spec.schedule, function: fn.arn });
});
