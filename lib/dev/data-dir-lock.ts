/**
 * @module Who serves a data folder (docs/cli.md): `nimbus dev` holds it alone (`dev.lock`, created exclusively,
 * its pid inside), while the documented multi-process layout (`nimbus namesrv` and `nimbus broker` processes)
 * shares it (one `roles/<pid>` file each). A second `nimbus dev` on a folder in use, or a namesrv/broker process on
 * a `nimbus dev`'s folder, is refused with the pid that holds it, before anything listens. A holder that died (even
 * by SIGKILL) leaves a file whose pid no longer runs: the next start takes the folder over.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import path from "node:path";

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly holder: "nimbus dev" | "a namesrv or broker process",
  ) {
    super(
      `the data folder ${dataDir} is in use by ${holder} (pid ${pid}): stop it, or give this one another --data-dir`,
    );
    this.name = "DataDirInUseError";
  }
}

/** Whether `pid` is a running process (signal 0 only checks). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const readPid = (file: string): number => {
  try {
    return Number(readFileSync(file, "utf8").trim());
  } catch {
    return 0;
  }
};

/** The live namesrv/broker processes of the folder (files of dead ones are removed). */
function liveRoles(rolesDir: string): number[] {
  if (!existsSync(rolesDir)) return [];
  const pids: number[] = [];
  for (const name of readdirSync(rolesDir)) {
    const pid = Number(name);
    if (alive(pid)) pids.push(pid);
    else rmSync(path.join(rolesDir, name), { force: true });
  }
  return pids;
}

/**
 * Takes the folder for this process: `exclusive` for `nimbus dev`, shared for a namesrv or broker process.
 * Throws DataDirInUseError when another holder forbids it. The hold ends when this process exits.
 */
export function holdDataDir(dataDir: string, exclusive: boolean): void {
  mkdirSync(dataDir, { recursive: true });
  const devLock = path.join(dataDir, "dev.lock");
  const rolesDir = path.join(dataDir, "roles");
  const devPid = readPid(devLock);
  if (alive(devPid)) throw new DataDirInUseError(dataDir, devPid, "nimbus dev");
  if (!exclusive) {
    mkdirSync(rolesDir, { recursive: true });
    const mine = path.join(rolesDir, String(process.pid));
    closeSync(openSync(mine, "w"));
    process.once("exit", () => rmSync(mine, { force: true }));
    return;
  }
  const [rolePid] = liveRoles(rolesDir);
  if (rolePid !== undefined) throw new DataDirInUseError(dataDir, rolePid, "a namesrv or broker process");
  rmSync(devLock, { force: true }); // a dead holder's
  let fd: number;
  try {
    // Exclusive create: of two starts at once, one gets the folder; the other reads its pid.
    fd = openSync(devLock, "wx");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    throw new DataDirInUseError(dataDir, readPid(devLock), "nimbus dev");
  }
  writeSync(fd, `${process.pid}\n`);
  closeSync(fd);
  process.once("exit", () => {
    if (readPid(devLock) === process.pid) rmSync(devLock, { force: true });
  });
}
