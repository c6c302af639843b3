/**
 * @module The README's high-availability section, as written: its background lines start the name server
 * and the brokers (the built `nimbus`, on free ports in place of the README's and a fresh data folder), each
 * printing its own pid; `kill -9 <pid>` SIGKILLs the process that printed that pid in the README (broker-a's
 * master) by the pid it printed here, and every other line runs and prints what the README shows.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, type RunningCli, spawnNimbus } from "../support/cli-runner.js";
import { consoleSteps, normalize, readmeSection } from "../support/readme-console.js";
import { freePort } from "../support/topology.js";

describe("the README's high-availability section (the built CLI, real processes)", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-ha-tour-"));
  const jobs: RunningCli[] = [];
  before(() => ensureBuilt());
  after(async () => {
    for (const job of jobs) {
      if (job.child.exitCode === null && job.child.signalCode === null) job.child.kill("SIGKILL");
      await job.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts the processes, survives the master's death, and prints what the README shows", async () => {
    const steps = consoleSteps(readmeSection(/^## High availability/m));
    assert.ok(
      steps.some((s) => s.kind === "kill"),
      "the section kills a master",
    );
    // The README's ports and folder, mapped to free ports and a temp folder.
    const ports = new Map<string, string>();
    for (const step of steps.filter((s) => s.kind === "background")) {
      const i = step.args.indexOf("--port");
      const port = step.args[i + 1];
      if (i >= 0 && port !== undefined) ports.set(port, String(await freePort()));
    }
    const local = (args: string[]) =>
      args.map((a, i) => (args[i - 1] === "--port" ? (ports.get(a) ?? a) : args[i - 1] === "--data-dir" ? dataDir : a));
    const url = `http://127.0.0.1:${ports.get("9876")}`;
    for (const step of steps) {
      if (step.kind === "background") {
        const job = spawnNimbus(local(step.args));
        jobs.push(job);
        await job.waitForStdout(/listening on/);
      } else if (step.kind === "kill") {
        // The README's pid names the background server that printed it; here that server printed its own.
        const background = steps.filter((s) => s.kind === "background");
        const index = background.findIndex((s) => s.expected.includes(`(pid ${step.args[0]},`));
        const job = jobs[index];
        assert.ok(job, `${step.command}: no background line of the README printed that pid`);
        const printed = Number(/\(pid (\d+),/.exec(job.stdout())?.[1]);
        assert.equal(printed, job.child.pid, "the server prints its own process id");
        process.kill(printed, "SIGKILL");
        await job.exited;
        assert.equal(job.child.signalCode, "SIGKILL", step.command);
      } else {
        const r = await nimbus(local(step.args), { url });
        assert.equal(r.code, 0, `${step.command}\n${r.stderr}`);
        assert.equal(normalize(r.stdout + r.stderr), normalize(step.expected), step.command);
      }
    }
  });
});
