/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.0.8) as a test process: the Maven module in
 * test/interop/java, run as a JVM per scenario of its Interop.java (java-module.ts builds, runs and skips).
 */
import { javaModule } from "./java-module.js";

export type { JavaProcess, JavaRun } from "./java-module.js";

const client = javaModule({
  folder: "java",
  jar: "nimbus-java-interop-1.0.0.jar",
  mainClass: "nimbus.interop.Interop",
  label: "the Java client",
  logProperties: (root) => [`-Drocketmq.log.root=${root}`],
});

/** Why the Java client cannot run here (no Java, no Maven, the module does not build), or undefined. */
export const javaClientUnavailable = (): string | undefined => client.unavailable();

/** Starts one scenario of Interop.java (`check-back ...`); killed after `timeoutMs` (a guard, not a speed rule). */
export const startJavaClient = client.start;

/** Runs one scenario of Interop.java (`produce ...`, `consume ...`) to its end; rejects when it fails. */
export const runJavaClient = client.run;
