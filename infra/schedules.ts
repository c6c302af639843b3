/**
 * @module The scheduled functions of manifest.ts on EventBridge: broker registration every minute (the
 * name server expires a broker 120 s after its last registration), transaction check-backs, delayed delivery
 * and subscription delivery every minute, and hourly retention.
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

const functions = new Map(scheduled.map(([name, spec]) => [name, createFunction(name, spec, api.url)] as const));

export const schedules = scheduled.map(([name, spec]) => {
  const fn = functions.get(name) as sst.aws.Function;
  return new sst.aws.Cron(`${name}Schedule`, { schedule: spec.schedule, function: fn.arn });
});

/**
 * The role subscription deliveries invoke Lambda targets with (docs/subscriptions.md): it has no identity
 * permission to invoke any function; a subscriber function grants it `lambda:InvokeFunction` in its resource
 * policy. Absent on a slave cell (delivery is the master stage's).
 */
export const dispatchRole = functions.get("Dispatch")?.nodes.role.arn;
