/**
 * @module Scheduled every minute: check-backs of transactions not ended in time (RocketMQ's
 * TransactionalMessageCheckService), left for a live producer of each group to pick up with its heartbeat.
 */
import type { TransactionCheckReport } from "../lib/broker/transactions/index.js";
import type { HandlerContext } from "../lib/http/context.js";
import { awsContext } from "./shared/aws-context.js";

export const checkTransactions = (ctx: HandlerContext): Promise<TransactionCheckReport> =>
  ctx.broker.checkTransactions();

export const handler = async (): Promise<TransactionCheckReport> => checkTransactions(await awsContext());
