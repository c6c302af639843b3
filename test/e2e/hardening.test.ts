/** @module Issue 26's hostile-input findings on the embedded store and on the AWS adapters (dynalite + s3rver). */
import { hardeningAuthSuite } from "./hardening-auth-suite.js";
import { hardeningSuite } from "./hardening-suite.js";

for (const mode of ["local", "aws"] as const) {
  hardeningSuite(mode);
  hardeningAuthSuite(mode);
}
