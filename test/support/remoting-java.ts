/**
 * @module RocketMQ's classic remoting client (rocketmq-client 4.9.8) as a test process: the Maven module in
 * test/interop/remoting-java, run as a JVM per scenario of its Interop.java (java-module.ts builds, runs and skips);
 * `REMOTING_CLIENTS` adds the same scenarios built against rocketmq-client 5.3.3 (test/interop/remoting-java5).
 */
import { type JavaProcess, type JavaRun, javaModule } from "./java-module.js";

/** A running scenario: its stdout lines so far; `stop()` ends its stdin (the `member` scenario then shuts down). */
export type RemotingClientProcess = JavaProcess;

const client = javaModule({
  folder: "remoting-java",
  jar: "nimbus-remoting-interop-1.0.0.jar",
  mainClass: "nimbus.remoting.Interop",
  label: "the remoting Java client",
  logProperties: (root) => [`-Drocketmq.client.logRoot=${root}`, `-Duser.home=${root}`],
});

/** Why the 4.x Java client cannot run here (no Java, no Maven, the module does not build), or undefined. */
export const remotingClientUnavailable = (): string | undefined => client.unavailable();

/** Starts one scenario of Interop.java; killed after `timeoutMs` (a guard). */
export const startRemotingClient = (args: string[], timeoutMs?: number): RemotingClientProcess =>
  client.start(args, timeoutMs);

/** Runs one scenario of Interop.java (`produce ...`, `push ...`) to its end; killed after `timeoutMs` (a guard). */
export const runRemotingClient = (args: string[], timeoutMs?: number): Promise<JavaRun> => client.run(args, timeoutMs);

/** One remoting Java client version: the module that builds Interop.java's scenarios against it. */
export interface RemotingClientVersion {
  /** "4.9.8", "5.3.3". */
  readonly version: string;
  unavailable(): string | undefined;
  run(args: string[], timeoutMs?: number): Promise<JavaRun>;
  start(args: string[], timeoutMs?: number): RemotingClientProcess;
}

/** The same scenarios built against rocketmq-client 5.3.3 (test/interop/remoting-java5). */
const client5 = javaModule({
  folder: "remoting-java5",
  jar: "nimbus-remoting-interop5-1.0.0.jar",
  mainClass: "nimbus.remoting.Interop",
  label: "the remoting Java client 5.3.3",
  logProperties: (root) => [`-Drocketmq.client.logRoot=${root}`, `-Duser.home=${root}`],
});

/** Every remoting client version the tests run: 4.9.8 and the 5.x line's classic API (5.3.3). */
export const REMOTING_CLIENTS: readonly RemotingClientVersion[] = [
  { version: "4.9.8", unavailable: client.unavailable, run: client.run, start: client.start },
  { version: "5.3.3", unavailable: client5.unavailable, run: client5.run, start: client5.start },
];
