#!/usr/bin/env node
/**
 * @module The `nimbus` command: mqadmin's core commands, `send` and `consume` over the HTTP API, and `dev`
 * (the local broker). Exit codes: 0 done, 1 the command failed (one line: `nimbus: CODE: message`), 2 the
 * command line was wrong (docs/cli.md).
 */
import { CommandLineExit, describeFailure, oneLine } from "./common.js";
import { escapeControls } from "./output.js";
import { buildProgram } from "./program.js";
import { leaveIfWorker } from "./workers.js";

const program = buildProgram();
program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommandLineExit) {
    process.exitCode = err.exitCode;
    leaveIfWorker();
    return;
  }
  process.stderr.write(`nimbus: ${escapeControls(oneLine(describeFailure(err)), false)}\n`);
  process.exitCode = 1;
  leaveIfWorker();
});
