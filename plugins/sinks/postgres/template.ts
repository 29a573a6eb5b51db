/**
 * The initdb template: initdb's output (with ingestbench's pg_hba.conf lines) kept in ingestbench's cache
 * (core/cache.ts, kind `postgres-initdb`) and copied into each run's empty data directory instead of running initdb
 * again, which takes 3–13 s on a busy 2-core machine (and runs inside the sink's cgroup: a quarter core on
 * local-quarter-core), where the copy of its ~40 MB takes a fraction of a second. Every cell still gets a cluster
 * of its own that no server has ever run on: the copy is the state initdb leaves, before the first start (the copies
 * share pg_control's system identifier, which nothing of a benchmark reads).
 *
 * The key is a digest of everything initdb's output depends on here: the binaries (package version, directory, the
 * initdb and postgres executables' size and mtime), initdb's arguments, the pg_hba.conf lines appended, the server
 * account's uid and gid (the files' owner), the time zone initdb writes into postgresql.conf (TZ, /etc/localtime),
 * the sink's memory cap where it could bound initdb's probe of max_connections and shared_buffers (`postgres --check`
 * with its candidates, largest first: 100 and 128MB start within 1 GiB, so every cap of 1 GiB and more is one key),
 * and the template's format version. A cluster
 * with a password (INGESTBENCH_POSTGRES_PASSWORD, core/secrets.ts) is never cached: initdb runs every time, so no
 * password verifier is ever kept outside a run's own directory.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { chown, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { cacheEntry, copyTree, fillCacheEntry, type RunProgram } from "../../../core/cache.ts";
import type { CgroupPaths } from "../../../core/hosts.ts";

/** The cache kind of the initdb templates. */
export const TEMPLATE_KIND = "postgres-initdb";
/** Bumped when what a template holds changes shape. */
const FORMAT = 1;

/** What an initdb template depends on (see the module doc). */
export interface TemplateInputs {
  packageVersion: string;
  binDir: string;
  /** initdb's arguments without -D */
  initdbArgs: string[];
  /** the text appended to pg_hba.conf */
  hba: string;
  uid: number;
  gid: number;
  /** the sink host's memory cap, bytes (null: none) */
  memoryCapBytes: number | null;
}

/** Memory caps from this size up are one key: initdb's largest candidates start within it. */
const PROBE_ROOM_BYTES = 1024 ** 3;

/** "<size>:<mtime ms>" of a file, or "missing". */
function fileStamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return "missing";
  }
}

/** The time zone initdb would find: TZ, else where /etc/localtime points. */
function timeZone(env: NodeJS.ProcessEnv): string {
  if (env.TZ !== undefined) return `TZ=${env.TZ}`;
  try {
    return readlinkSync("/etc/localtime");
  } catch {
    return "none";
  }
}

export { memoryCapOf } from "../../../core/memory-cap.ts";

/** The cache key of a template: sha256 (hex, 32 chars) over the inputs, the binaries' stamps and the time zone. */
export function templateKey(inputs: TemplateInputs, env: NodeJS.ProcessEnv = process.env): string {
  const stamps = ["initdb", "postgres"].map((b) => fileStamp(join(inputs.binDir, b)));
  const memory =
    inputs.memoryCapBytes === null || inputs.memoryCapBytes >= PROBE_ROOM_BYTES
      ? "≥ 1 GiB"
      : inputs.memoryCapBytes;
  const text = JSON.stringify({
    format: FORMAT,
    ...inputs,
    memoryCapBytes: memory,
    stamps,
    tz: timeZone(env),
  });
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/** The template's cache directory (it holds `pgdata/`), whether made yet or not; null when the cache is off. */
export function templateDir(inputs: TemplateInputs, env: NodeJS.ProcessEnv = process.env): string | null {
  return cacheEntry(TEMPLATE_KIND, templateKey(inputs, env), env);
}

/**
 * Fill the empty data directory `pgdata` (owned by uid:gid, mode 0700) from the template at `template`, the copy run
 * by `run` (the sink's host: in the run's cgroups); false when there is none yet, or the copy failed (then `pgdata`
 * is empty again, as it was). Never throws.
 */
export async function copyTemplate(
  template: string,
  pgdata: string,
  uid: number,
  gid: number,
  run?: RunProgram,
): Promise<boolean> {
  const from = join(template, "pgdata");
  if (!existsSync(join(from, "PG_VERSION"))) return false;
  try {
    await copyTree(from, pgdata, run);
    return true;
  } catch {
    // a partial copy (a full disk, the cache deleted meanwhile): back to the empty directory initdb needs
    await rm(pgdata, { recursive: true, force: true });
    await mkdir(pgdata, { mode: 0o700 });
    await chown(pgdata, uid, gid);
    return false;
  }
}

/**
 * Keep the data directory `pgdata` as it is (initdb's output, before any server ran on it) as the template at
 * `template` (core/cache.ts fillCacheEntry: staged, then renamed into place), the copy run by `run` (as in
 * copyTemplate). Resolves false when it existed already.
 * @throws what the copy or the rename throws
 */
export async function saveTemplate(template: string, pgdata: string, run?: RunProgram): Promise<boolean> {
  return fillCacheEntry(template, async (staging) => {
    const to = join(staging, "pgdata");
    await mkdir(to, { mode: 0o700 });
    await copyTree(pgdata, to, run);
  });
}
