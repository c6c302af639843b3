/** @module The end-to-end suite against the local server on the embedded store (SQLite + files in a temp folder). */
import { e2eSuite } from "./e2e-suite.js";

e2eSuite("local");
