/**
 * ingestbench's cache of directories that cost seconds to make and come out the same every time for the same inputs
 * (PostgreSQL's initdb output: plugins/sinks/postgres/template.ts). Where: `$INGESTBENCH_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/ingestbench`, else `~/.cache/ingestbench` (for root: /root/.cache/ingestbench); the value `off`
 * turns the cache off (every run makes its directories itself).
 *
 * An entry `<root>/<kind>/<key>/` (key: a digest of everything its content depends on, made by the caller) is
 * complete once it exists: it is filled in a staging directory beside it (`.staging-<pid>-<random>`) and renamed into
 * place, and never changed after; of two runs filling one key at once the first rename wins and the other's staging is
 * removed. A staging directory whose process is gone (killed while filling) is removed by the next fill of its kind.
 * Nothing reads an entry in place: it is copied (`cp -a`: owners, modes and times kept) into the run's own directory,
 * so deleting the cache (or an entry) whenever no run is copying from it is safe: the entries are made again.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileP = promisify(execFile);

/** The cache's root directory (see the module doc), or null when INGESTBENCH_CACHE_DIR is `off`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string | null {
  const dir = env.INGESTBENCH_CACHE_DIR;
  if (dir === "off") return null;
  if (dir) return path.resolve(dir);
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "ingestbench");
}

/** The directory of entry `key` of `kind` (whether it exists or not), or null when the cache is off. */
export function cacheEntry(kind: string, key: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const root = cacheRoot(env);
  return root === null ? null : path.join(root, kind, key);
}

/** Is the process `pid` alive (signal 0 reaches it, or it exists under another user)? */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

/**
 * Make entry `entry` (a cacheEntry path) from `fill`, which writes the entry's content into the directory it is
 * given (empty, made here); resolves true when this call put it in place, false when it existed already or another
 * run's rename won. Stale staging directories of this kind (their process gone) are removed first.
 * @throws what `fill`, mkdir or rename throw (the staging directory is removed first)
 */
export async function fillCacheEntry(
  entry: string,
  fill: (staging: string) => Promise<void>,
): Promise<boolean> {
  if (existsSync(entry)) return false;
  const kindDir = path.dirname(entry);
  await mkdir(kindDir, { recursive: true, mode: 0o700 });
  for (const name of await readdir(kindDir)) {
    const pid = /^\.staging-(\d+)-/.exec(name)?.[1];
    if (pid !== undefined && !alive(Number(pid)))
      await rm(path.join(kindDir, name), { recursive: true, force: true });
  }
  const staging = path.join(kindDir, `.staging-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(staging, { mode: 0o700 });
  try {
    await fill(staging);
    await rename(staging, entry);
    return true;
  } catch (err) {
    // ENOTEMPTY/EEXIST: another run's rename won; its entry is as good as ours
    if (existsSync(entry) && ["ENOTEMPTY", "EEXIST"].includes((err as { code?: string }).code ?? ""))
      return false;
    throw err;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Runs a program to its end (resolves) or its failure (rejects), e.g. on a run's host (core/process.ts runOnce). */
export type RunProgram = (file: string, args: string[]) => Promise<unknown>;

const runHere: RunProgram = (file, args) => execFileP(file, args);

/**
 * Copy the content of directory `from` into directory `to` (which exists) with `cp -a --reflink=auto`: owners (when
 * root), modes and times kept, blocks shared where the filesystem can (btrfs, xfs). `run` runs the cp (default: a
 * child of this process); a copy into a run's directory goes through the run's host, so that it lives in the run's
 * cgroups and ends with the run (killed with it: infra/local/strays.ts).
 * @throws the failed cp's error (its output in the message)
 */
export async function copyTree(from: string, to: string, run: RunProgram = runHere): Promise<void> {
  await run("cp", ["-a", "--reflink=auto", `${from}/.`, to]);
}
