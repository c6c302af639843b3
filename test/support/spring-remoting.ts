/**
 * @module The Spring Boot application of test/interop/spring-remoting (rocketmq-spring-boot-starter 2.3.4:
 * RocketMQTemplate and a @RocketMQMessageListener over the classic remoting client) as a test process, one JVM per
 * run (java-module.ts builds, runs and skips).
 */
import { type JavaRun, javaModule } from "./java-module.js";

const app = javaModule({
  folder: "spring-remoting",
  jar: "nimbus-spring-remoting-interop-1.0.0.jar",
  mainClass: "nimbus.spring.App",
  label: "the Spring Boot application",
  logProperties: (root) => [`-Drocketmq.client.logRoot=${root}`, `-Duser.home=${root}`],
});

/** Why the Spring application cannot run here (no Java, no Maven, the module does not build), or undefined. */
export const springAppUnavailable = (): string | undefined => app.unavailable();

export interface SpringRun {
  namesrv: string;
  topic: string;
  group: string;
  count: number;
  tag: string;
}

/** Runs the application once: it sends `count` messages with RocketMQTemplate and ends when its listener has them. */
export const runSpringApp = (r: SpringRun, timeoutMs?: number): Promise<JavaRun> =>
  app.run(
    [
      `--rocketmq.name-server=${r.namesrv}`,
      `--nimbus.topic=${r.topic}`,
      `--nimbus.group=${r.group}`,
      `--nimbus.count=${r.count}`,
      `--nimbus.tag=${r.tag}`,
    ],
    timeoutMs,
  );
