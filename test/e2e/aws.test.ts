/**
 * @module The end-to-end suite against the local server on the AWS adapter, pointed at dynalite and s3rver
 * started in this process (fresh tables and bucket per server). Needs `--openssl-legacy-provider`
 * (`npm test` sets it) for s3rver's continuation tokens.
 */
import { e2eSuite } from "./e2e-suite.js";

e2eSuite("aws");
