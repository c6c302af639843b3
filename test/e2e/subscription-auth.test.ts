/** @module The subscription endpoints' ACLs on the embedded store and on the AWS adapters (dynalite + s3rver). */
import { subscriptionAuthSuite } from "./subscription-auth-suite.js";

for (const mode of ["local", "aws"] as const) subscriptionAuthSuite(mode);
