/**
 * @module The scheduled functions of manifest.ts on EventBridge: broker registration every minute (the
 * name server expires a broker 120 s after its last registration), transaction check-backs every minute and
 * hourly retention.
 */
import { api } from "./api.js";
import { createFunction } from "./functions.js";
import { SCHEDULED_FUNCTIONS } from "./manifest.js";

export const schedules = Object.entries(SCHEDULED_FUNCTIONS).map(([name, spec]) => {
  const fn = createFunction(name, spec, api.url);
  return new sst.aws.Cron(`${name}Schedule`, { schedule: spec.schedule, function: fn.arn });
});
