/**
 * @module Scheduled every minute: one lag sample per consumer group into its bounded ring (lib/broker/groups),
 * so the console's lag chart has history when the page opens. `nimbus dev` runs it on a timer.
 */
import type { SampleReport } from "../lib/broker/index.js";
import type { HandlerContext } from "../lib/http/context.js";
import { awsContext } from "./shared/aws-context.js";

export const sampleLag = (ctx: HandlerContext): Promise<SampleReport> => ctx.broker.sampleLag();

export const handler = async (): Promise<SampleReport> => sampleLag(await awsContext());
