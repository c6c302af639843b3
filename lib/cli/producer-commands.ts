/** @module mqadmin's producer-group command: `producerConnection` (the group's live producers). */
import type { Command } from "commander";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";

interface ConnectionOptions extends ApiOptions {
  groupName: string;
}

export function addProducerCommands(program: Command): void {
  apiCommand(program, "producerConnection", "list a group's live producers: client id, address, language, version")
    .requiredOption("-g, --groupName <group>", "producer group")
    .option(
      "-t, --topic <topic>",
      "mqadmin's topic (it finds the brokers there); Nimbus's producers register stage-wide",
    )
    .action(producerConnection);
}

async function producerConnection(opts: ConnectionOptions): Promise<void> {
  const producers = await connect(opts).producerConnection(opts.groupName);
  if (opts.json) return printJson({ producers });
  print(
    formatTable(
      [
        { header: "ClientId" },
        { header: "ClientAddr" },
        { header: "Language" },
        { header: "Version" },
        { header: "Last Heartbeat" },
      ],
      producers.map((p) => [p.clientId, p.clientAddr, p.language, p.version, formatTime(p.lastHeartbeat)]),
    ),
  );
  if (producers.length === 0) note(`group ${opts.groupName} has no live producer`);
}
