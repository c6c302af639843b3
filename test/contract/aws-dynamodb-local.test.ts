/**
 * @module The AWS adapter on Amazon's DynamoDB Local (one JVM for the file, in memory, on a loopback port:
 * `test/support/dynamodb-local.ts`) and s3rver: the same contract as on dynalite (`aws-contract.ts`), where
 * DynamoDB's stricter answers show (the stored item with a failed condition, item sizes, attribute names).
 * Skipped, with the reason, where Java is missing (`.ci/run` installs it).
 */
import { awsContract } from "./aws-contract.js";

awsContract("dynamodb-local");
