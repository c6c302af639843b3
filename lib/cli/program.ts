/** @module The `nimbus` command's program: every command and option (main.ts parses the command line with it). */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { addAclCommands } from "./acl-commands.js";
import { configureErrors } from "./common.js";
import { addConsumerCommands } from "./consumer-commands.js";
import { addDevCommand } from "./dev-command.js";
import { addDlqCommands } from "./dlq-commands.js";
import { addGroupAdminCommands } from "./group-admin-commands.js";
import { addMessageCommands } from "./message-commands.js";
import { addMissingCommands } from "./mqadmin-compat.js";
import { MISSING_COMMANDS } from "./mqadmin-missing.js";
import { addProducerCommands } from "./producer-commands.js";
import { addProxyCommand } from "./proxy-command.js";
import { addQueryCommands } from "./query-commands.js";
import { addReceiveCommand } from "./receive-command.js";
import { addSendCommand } from "./send-command.js";
import { addSubscriptionCommands } from "./subscription-commands.js";
import { addSubscriptionGroupCommands } from "./subscription-group-commands.js";
import { addTopicCommands } from "./topic-commands.js";
import { addTraceCommands } from "./trace-commands.js";

/** The whole command tree, not yet parsed. */
export function buildProgram(): Command {
  const program = new Command("nimbus")
    .description("Nimbus: a serverless message broker with RocketMQ's model. mqadmin's commands over the HTTP API.")
    .version(packageVersion(), "-V, --version")
    .showSuggestionAfterError();
  configureErrors(program);
  addDevCommand(program);
  addProxyCommand(program);
  addTopicCommands(program);
  addConsumerCommands(program);
  addGroupAdminCommands(program);
  addSubscriptionCommands(program);
  addSubscriptionGroupCommands(program);
  addProducerCommands(program);
  addSendCommand(program);
  addMessageCommands(program);
  addQueryCommands(program);
  addTraceCommands(program);
  addReceiveCommand(program);
  addAclCommands(program);
  addDlqCommands(program);
  addMissingCommands(program, MISSING_COMMANDS);
  program.addHelpText(
    "after",
    "\nEvery API command takes -n/--namesrv <url> (default http://127.0.0.1:9876, or NIMBUS_URL) and --json.",
  );
  return program;
}

/** The package's version, from the package.json above this file (lib/cli/ in the repo, dist/lib/cli/ built). */
function packageVersion(): string {
  for (const up of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "nimbus-mq" && pkg.version) return pkg.version;
    } catch {
      // not there: try the next level
    }
  }
  return "0.0.0";
}
