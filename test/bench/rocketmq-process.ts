/**
 * @module Apache RocketMQ 5.3.3 as the bench's yardstick (/work/shared/ROCKETMQ-ANCHOR.md): its jars from Maven
 * Central (test/bench/rocketmq/server, `mvn -q -B package`), a NameServer and a LOCAL-mode Proxy (the broker
 * inside it, async flush) on free loopback ports, logs and store in a temp folder (`-Duser.home`), topics made
 * with its own mqadmin. `stop` kills both JVMs and removes the folder.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "rocketmq");
const JVM = ["-Xms512m", "-Xmx1g", "-XX:MaxDirectMemorySize=1g"];
const START_TIMEOUT_MS = 180_000;

/** The newest modification time of `file` or of any file under it (0 when it does not exist). */
function newestMtime(file: string): number {
  if (!existsSync(file)) return 0;
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(file).reduce((newest, name) => Math.max(newest, newestMtime(path.join(file, name))), stat.mtimeMs);
}

/**
 * Builds a Maven module of test/bench/rocketmq (offline first), so its jars are in target/lib, and again when its
 * sources, its pom.xml or, for the client programs, their shared sources (common/) changed since the last build
 * (target/.nimbus-built, written after each build that succeeded).
 */
export function buildModule(name: "server" | "client" | "remoting-client"): string {
  const dir = path.join(ROOT, name);
  const stamp = path.join(dir, "target", ".nimbus-built");
  const sources = Math.max(
    newestMtime(path.join(dir, "src")),
    newestMtime(path.join(dir, "pom.xml")),
    name === "server" ? 0 : newestMtime(path.join(ROOT, "common", "src")),
  );
  const built = existsSync(path.join(dir, "target", "lib")) ? newestMtime(stamp) : 0;
  if (built === 0 || sources > built) {
    const offline = spawnSync("mvn", ["-q", "-B", "-o", "package"], { cwd: dir, stdio: "inherit" });
    if (offline.status !== 0) {
      const online = spawnSync("mvn", ["-q", "-B", "package"], { cwd: dir, stdio: "inherit" });
      if (online.status !== 0) throw new Error(`test/bench/rocketmq/${name} does not build (mvn package)`);
    }
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  }
  return dir;
}

/** The class path of a built module: its classes and every jar it depends on. */
export function classPath(dir: string): string {
  return [path.join(dir, "target", "classes"), path.join(dir, "target", "lib", "*")].join(path.delimiter);
}

/** A free loopback port `p` whose neighbours `p - 2` and `p + 1` are free too (the broker opens both). */
async function freePort(room = false): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    if (!room) return port;
    const around = await Promise.all([port - 2, port + 1].map(isFree));
    if (port > 1026 && around.every(Boolean)) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

async function untilListening(port: number, child: ChildProcess, what: string): Promise<void> {
  const until = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode})`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1")
        .once("connect", () => {
          socket.destroy();
          resolve(true);
        })
        .once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${what} did not listen on ${port} within ${START_TIMEOUT_MS / 1000} s`);
}

export interface RocketMQ {
  /** The Proxy's gRPC endpoint (`127.0.0.1:<port>`), as the 5.x clients take it. */
  grpcEndpoint: string;
  /** The NameServer (`127.0.0.1:<port>`), as the 4.x clients and mqadmin take it. */
  nameServer: string;
  /** Creates a NORMAL topic with `queues` read and write queues on the broker (its own mqadmin). */
  createTopic(topic: string, queues: number): void;
  /** The JVMs' pids (to read their CPU time). */
  pids(): number[];
  stop(): Promise<void>;
}

export async function startRocketMQ(): Promise<RocketMQ> {
  const cp = classPath(buildModule("server"));
  const home = mkdtempSync(path.join(os.tmpdir(), "nimbus-bench-rocketmq-"));
  const children: ChildProcess[] = [];
  const java = (args: string[], name: string): ChildProcess => {
    const child = spawn("java", [...JVM, `-Duser.home=${home}`, "-cp", cp, ...args], {
      env: { ...process.env, ROCKETMQ_HOME: home, RMQ_PROXY_HOME: home },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", () => undefined);
    children.push(child);
    child.once("exit", (code, signal) => {
      if (code !== 0 && signal === null) console.error(`bench rocketmq: ${name} exited (${code})`);
    });
    return child;
  };
  const stop = async () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once("exit", r)))));
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const nsPort = await freePort();
    writeFileSync(path.join(home, "namesrv.conf"), `listenPort=${nsPort}\n`);
    const ns = java(
      ["org.apache.rocketmq.namesrv.NamesrvStartup", "-c", path.join(home, "namesrv.conf")],
      "NameServer",
    );
    await untilListening(nsPort, ns, "the NameServer");
    const nameServer = `127.0.0.1:${nsPort}`;
    const brokerPort = await freePort(true);
    const grpcPort = await freePort();
    const remotingPort = await freePort();
    const store = path.join(home, "store");
    mkdirSync(store, { recursive: true });
    writeFileSync(
      path.join(home, "broker.conf"),
      [
        "brokerClusterName=DefaultCluster",
        "brokerName=broker-a",
        "brokerId=0",
        "brokerIP1=127.0.0.1",
        `listenPort=${brokerPort}`,
        `namesrvAddr=${nameServer}`,
        `storePathRootDir=${store}`,
        `storePathCommitLog=${path.join(store, "commitlog")}`,
        "flushDiskType=ASYNC_FLUSH",
        "autoCreateTopicEnable=false",
      ].join("\n"),
    );
    writeFileSync(
      path.join(home, "proxy.json"),
      JSON.stringify({
        rocketMQClusterName: "DefaultCluster",
        proxyMode: "LOCAL",
        namesrvAddr: nameServer,
        grpcServerPort: grpcPort,
        remotingListenPort: remotingPort,
      }),
    );
    const proxy = java(
      [
        "org.apache.rocketmq.proxy.ProxyStartup",
        ...["-pc", path.join(home, "proxy.json"), "-pm", "local", "-bc", path.join(home, "broker.conf")],
        ...["-n", nameServer],
      ],
      "the Proxy",
    );
    await untilListening(grpcPort, proxy, "the Proxy");
    await untilListening(brokerPort, proxy, "the broker");
    const admin = (args: string[]) => {
      const run = spawnSync(
        "java",
        ["-Xmx256m", `-Duser.home=${home}`, "-cp", cp, "org.apache.rocketmq.tools.command.MQAdminStartup", ...args],
        { encoding: "utf8", env: { ...process.env, ROCKETMQ_HOME: home } },
      );
      if (run.status !== 0 || /Exception|error/i.test(run.stdout.split("\n").slice(-5).join("\n")))
        throw new Error(`mqadmin ${args[0]} failed: ${run.stdout.slice(-800)}${run.stderr.slice(-800)}`);
    };
    const untilAdmin = (args: string[]) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return admin(args);
        } catch (err) {
          if (attempt >= 20 || !/clusterName exists/.test(String(err))) throw err;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
        }
      }
    };
    return {
      grpcEndpoint: `127.0.0.1:${grpcPort}`,
      nameServer,
      // The broker registers with the NameServer shortly after it listens: until then mqadmin finds no cluster.
      createTopic: (topic, queues) =>
        untilAdmin([
          "updateTopic",
          "-n",
          nameServer,
          "-c",
          "DefaultCluster",
          "-t",
          topic,
          "-r",
          `${queues}`,
          "-w",
          `${queues}`,
          "-a",
          "+message.type=NORMAL",
        ]),
      pids: () => children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
