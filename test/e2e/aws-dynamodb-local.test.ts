/**
 * @module The end-to-end suite against the local server on the AWS adapter, pointed at Amazon's DynamoDB
 * Local (one JVM for the file, on a loopback port) and s3rver. Skipped, with the reason, where Java is
 * missing (`.ci/run` installs it). `npm run test:dynamodb-local` runs this file and the contract suite on
 * DynamoDB Local alone.
 */
import { e2eSuite } from "./e2e-suite.js";

e2eSuite("aws-dynamodb-local");
