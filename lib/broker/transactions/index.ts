export { TransactionChecker, type TransactionCheckReport } from "./transaction-checks.js";
export { halfQueuesOf } from "./transaction-records.js";
export {
  DEFAULT_TRANSACTION_OPTIONS,
  type TransactionOptions,
  TransactionService,
} from "./transaction-service.js";
