/**
 * @module The built CLI and who serves a data folder (lib/dev/data-dir-lock.ts): a second `nimbus dev` on a folder
 * in use is refused with the holder's pid, before it listens, and so is a namesrv on a `nimbus dev`'s folder; the
 * multi-process layout (namesrv and broker processes) shares a folder, and a `nimbus dev` is refused there; a holder
 * killed with SIGKILL leaves the folder free for the next start.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ensureBuilt, nimbus, type RunningCli, spawnNimbus } from "../support/cli-runner.js";

const started = async (args: string[]): Promise<RunningCli & { pid: number }> => {
  const cli = spawnNimbus(args);
  await cli.waitForStdout(/listening on/);
  return Object.assign(cli, { pid: Number(/pid (\d+)/.exec(cli.stdout())?.[1]) });
};

describe("nimbus dev and its data folder (the built CLI)", () => {
  const dirs: string[] = [];
  const running: RunningCli[] = [];
  const folder = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-lock-"));
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    for (const r of running) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
    await Promise.all(running.map((r) => r.exited));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a second nimbus dev (or a namesrv) on a folder in use is refused with the holder's pid; after SIGKILL it starts", async () => {
    await ensureBuilt();
    const dir = folder();
    const first = await started(["dev", "--port", "0", "--grpc-port", "0", "--data-dir", dir]);
    running.push(first);
    for (const command of [["dev", "--grpc-port", "0"], ["namesrv"]]) {
      const second = await nimbus([...command, "--port", "0", "--data-dir", dir]);
      assert.equal(second.code, 1, second.stderr);
      assert.match(second.stderr, new RegExp(`in use by nimbus dev \\(pid ${first.pid}\\)`));
      assert.doesNotMatch(second.stdout, /listening on/);
    }
    first.child.kill("SIGKILL");
    await first.exited;
    const next = await started(["dev", "--port", "0", "--grpc-port", "0", "--data-dir", dir]);
    running.push(next);
  });

  it("namesrv and broker processes share a folder; a nimbus dev there is refused", async () => {
    const dir = folder();
    const namesrv = await started(["namesrv", "--port", "0", "--data-dir", dir]);
    running.push(namesrv);
    const broker = await started(["broker", "--port", "0", "--broker-name", "broker-a", "--data-dir", dir]);
    running.push(broker);
    const dev = await nimbus(["dev", "--port", "0", "--grpc-port", "0", "--data-dir", dir]);
    assert.equal(dev.code, 1, dev.stderr);
    assert.match(dev.stderr, /in use by a namesrv or broker process \(pid \d+\)/);
  });
});
