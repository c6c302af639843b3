/**
 * @module RocketMQ's admin tool, mqadmin (rocketmq-tools 4.9.8, unchanged; the Maven module test/interop/mqadmin),
 * as test processes: one JVM per command (`MQAdminStartup <command> -n <namesrv> ...`), run in a temp folder
 * (consumerStatus writes each client's running info where it runs), its logback configuration the module's
 * conf/logback_tools.xml (warnings to stderr).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type JavaRun, javaModule } from "./java-module.js";

const home = join(dirname(fileURLToPath(import.meta.url)), "..", "interop", "mqadmin");

const tool = javaModule({
  folder: "mqadmin",
  jar: "nimbus-mqadmin-interop-1.0.0.jar",
  mainClass: "org.apache.rocketmq.tools.command.MQAdminStartup",
  label: "mqadmin (rocketmq-tools 4.9.8)",
  logProperties: (root) => [`-Drocketmq.home.dir=${home}`, `-Drocketmq.client.logRoot=${root}`, `-Duser.home=${root}`],
  runInLogRoot: true,
});

/** Why mqadmin cannot run here (no Java, no Maven, the module does not build), or undefined. */
export const mqadminUnavailable = (): string | undefined => tool.unavailable();

/**
 * Runs one mqadmin command to its end: its stdout lines and stderr. mqadmin exits 0 even when a command fails
 * (it prints the exception), so callers assert on the lines.
 */
export const mqadmin = (args: string[], timeoutMs?: number): Promise<JavaRun> => tool.run(args, timeoutMs);
