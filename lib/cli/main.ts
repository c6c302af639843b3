#!/usr/bin/env node
/** @module The `nimbus` command. */
import { Command } from "commander";
import { addDevCommand } from "./dev-command.js";

const program = new Command("nimbus").description("Nimbus: a serverless message broker with RocketMQ's model");
addDevCommand(program);
program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`nimbus: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
