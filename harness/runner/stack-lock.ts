/**
 * Per-stack locks: two runs sharing one stack (`bench`, `run`, `nightly`, `aa`; local or deployed) never overlap, and
 * `up`/`down` (harness/provision/deployed.ts withDeployLock) never deploy or destroy a stack under one of them.
 * Their hosts have the same names, cgroups, namespaces, ports or Pulumi stack, so a second run would measure the
 * first's load, or tear its hosts down under it.
 *
 * `<lockDir>/<stack>.json` — machine-wide, whatever TMPDIR a run has (`/run/ingestbench/locks` for root, else
 * `/tmp/ingestbench-locks`; INGESTBENCH_LOCKS_DIR overrides it), as infra/local/platform.ts ownersDir is, so a run
 * started with another TMPDIR (a replay on a larger disk) still sees the lock; `ingestbench gc` reads it — is created with
 * O_CREAT|O_EXCL (open flag "wx"), so exactly one process makes it. It holds the owner's pid, its start time in clock
 * ticks (/proc/<pid>/stat field 22, to tell a reused pid from the owner), the ISO time it was taken and the command.
 *
 * A second run is refused (ProvisioningError E_STACK_LOCKED, naming the holder's pid, command and start time) while
 * the holder runs. A lock whose holder is gone (no such pid, a zombie, or the pid now belongs to a process started at
 * another time) is stale: the next run takes it over, and `gc` removes it (collectStaleLocks). Taking over is done
 * under a guard file `<stack>.json.takeover` (also O_EXCL), and only after reading the stale holder again under it,
 * so two processes taking over at once never remove each other's fresh lock.
 *
 * Released (file removed, only when it is still this process's) on success and on error (harness/runner/drive.ts
 * releases it in a `finally`), on SIGINT/SIGTERM (the run is stopped and the same `finally` runs), and, as a
 * backstop, on process exit. After SIGKILL it stays behind, stale.
 */
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { ProvisioningError } from "../../core/errors.ts";
import { isOwnerAlive, processStartTicks } from "../../infra/local/platform.ts";

/** What a lock file holds. */
export interface StackLockHolder {
  stack: string;
  ownerPid: number;
  /** field 22 of /proc/<ownerPid>/stat (clock ticks since boot), as in infra/local/platform.ts RunRegistry */
  ownerStartTicks?: number;
  /** ISO time the lock was taken */
  startedAt: string;
  /** the command holding it, e.g. "bench" */
  command: string;
}

/** A lock this process holds. */
export interface StackLock {
  readonly holder: StackLockHolder;
  readonly file: string;
  /** the stale holder this lock was taken over from, if any */
  readonly tookOver: StackLockHolder | null;
  /** remove the lock file (idempotent; only while the file is still this lock) */
  release(): void;
}

/** The refusal of a lock another live process holds (E_STACK_LOCKED), with that holder. */
export class StackLockedError extends ProvisioningError {
  constructor(
    readonly holder: StackLockHolder,
    message: string,
  ) {
    super("E_STACK_LOCKED", message);
  }
}

/** Directory of the stack locks (see the file comment; mode 1777, shared by every user like /tmp). */
export function lockDir(): string {
  if (process.env.INGESTBENCH_LOCKS_DIR) return process.env.INGESTBENCH_LOCKS_DIR;
  return process.getuid?.() === 0 ? "/run/ingestbench/locks" : "/tmp/ingestbench-locks";
}

/** The lock file of a stack (names are Pulumi stack names: [a-zA-Z0-9._-]). */
export function lockFile(stack: string): string {
  return path.join(lockDir(), `${stack.replace(/[^\w.-]/g, "_")}.json`);
}

/** The holder recorded in a lock file, or null when it is gone or unreadable (being written, or damaged). */
export function readLock(file: string): StackLockHolder | null {
  try {
    const h = JSON.parse(readFileSync(file, "utf8")) as StackLockHolder;
    return typeof h.ownerPid === "number" && typeof h.stack === "string" ? h : null;
  } catch {
    return null;
  }
}

/**
 * True while the holder's process runs: isOwnerAlive (same pid, same start time) and not a zombie (a killed process
 * its parent has not reaped yet still answers kill(pid, 0)).
 */
export function holderAlive(h: Pick<StackLockHolder, "ownerPid" | "ownerStartTicks">): boolean {
  if (!isOwnerAlive(h)) return false;
  try {
    const stat = readFileSync(`/proc/${h.ownerPid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no procfs: what kill(pid, 0) said
  }
}

/** "pid 1234 (ingestbench bench, started 2026-12-01T12:00:00.000Z)" */
export function describeHolder(h: StackLockHolder): string {
  return `pid ${h.ownerPid} (ingestbench ${h.command}, started ${h.startedAt})`;
}

/** A lock file that cannot be read is being written by its maker (a few µs): one older than this is damaged. */
const UNREADABLE_STALE_MS = 5_000;
/** A takeover guard older than this belongs to a process that died between two syscalls. */
const GUARD_STALE_MS = 10_000;

const held = new Set<StackLock>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const l of [...held]) l.release();
  });
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Remove `file` if it still holds `stale` (same pid and start time), under the takeover guard. Returns whether it tried. */
function removeStale(file: string, stale: StackLockHolder | null): boolean {
  const guard = `${file}.takeover`;
  let fd: number;
  try {
    fd = openSync(guard, "wx", 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    if (ageMs(guard) > GUARD_STALE_MS) rmSync(guard, { force: true });
    return false; // another process is taking over: look again
  }
  try {
    closeSync(fd);
    const now = readLock(file);
    const same =
      stale === null
        ? now === null && ageMs(file) > UNREADABLE_STALE_MS
        : now !== null &&
          now.ownerPid === stale.ownerPid &&
          now.ownerStartTicks === stale.ownerStartTicks &&
          now.startedAt === stale.startedAt;
    if (same) rmSync(file, { force: true });
    return true;
  } finally {
    rmSync(guard, { force: true });
  }
}

/**
 * Take the lock of `stack` for this process (synchronously, before anything is provisioned). A lock this process
 * already holds is returned again (nested drivers of one command); a stale one is taken over.
 * @param command the command taking it, for the holder's description ("bench", "run", "nightly", "aa")
 * @throws StackLockedError (ProvisioningError E_STACK_LOCKED) while another live process holds it, naming its pid,
 *         command and start time
 */
export function acquireStackLock(stack: string, command: string): StackLock {
  const file = lockFile(stack);
  if (mkdirSync(lockDir(), { recursive: true }) !== undefined) chmodSync(lockDir(), 0o1777);
  let tookOver: StackLockHolder | null = null;
  for (let attempt = 0; attempt < 50; attempt++) {
    const holder: StackLockHolder = {
      stack,
      ownerPid: process.pid,
      ownerStartTicks: processStartTicks(process.pid),
      startedAt: new Date().toISOString(),
      command,
    };
    let fd: number | undefined;
    try {
      fd = openSync(file, "wx", 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ProvisioningError(
          "E_STACK_LOCK",
          `cannot create the lock of stack ${stack} (${file}): ${(err as Error).message}`,
          { cause: err },
        );
      }
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, `${JSON.stringify(holder, null, 2)}\n`);
      } finally {
        closeSync(fd);
      }
      const lock: StackLock = {
        holder,
        file,
        tookOver,
        release() {
          held.delete(lock);
          const now = readLock(file);
          if (now && now.ownerPid === holder.ownerPid && now.startedAt === holder.startedAt)
            rmSync(file, { force: true });
        },
      };
      held.add(lock);
      installExitHook();
      return lock;
    }
    const current = readLock(file);
    if (
      current &&
      current.ownerPid === process.pid &&
      current.ownerStartTicks === processStartTicks(process.pid)
    ) {
      // this process holds it already (e.g. nightly's driver inside a command that locked): the outer holder releases it
      return { holder: current, file, tookOver: null, release() {} };
    }
    if (current && holderAlive(current)) {
      throw new StackLockedError(
        current,
        `stack ${stack} is in use by another run: ${describeHolder(current)} holds ${file}; two runs on one stack would measure each other's load: wait for it (\`--lock-wait 30m\`, or INGESTBENCH_LOCK_WAIT), use another stack, or stop it if it is yours`,
      );
    }
    if (current === null && ageMs(file) <= UNREADABLE_STALE_MS) {
      // being written by its maker: look again in a moment
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      continue;
    }
    if (current) tookOver = current;
    removeStale(file, current);
  }
  throw new ProvisioningError(
    "E_STACK_LOCK",
    `cannot take the lock of stack ${stack} (${file}): it kept changing hands`,
  );
}

/** What collectStaleLocks found. */
export interface LockGcReport {
  /** nothing was removed: `removed` lists what would have been */
  dryRun: boolean;
  /** stacks whose stale lock was removed (or would be, with dryRun) */
  removed: Array<{ stack: string; holder: string }>;
  /** stacks locked by a live process: left alone */
  live: Array<{ stack: string; holder: string }>;
}

/** Remove the locks whose holder is gone (`ingestbench gc`); live ones are left alone. Never throws for one lock. */
export async function collectStaleLocks(opts: { dryRun?: boolean } = {}): Promise<LockGcReport> {
  const report: LockGcReport = { dryRun: Boolean(opts.dryRun), removed: [], live: [] };
  let names: string[];
  try {
    names = (await fs.readdir(lockDir())).filter((f) => f.endsWith(".json"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return report;
    throw err;
  }
  for (const n of names) {
    const file = path.join(lockDir(), n);
    const h = readLock(file);
    if (h && holderAlive(h)) {
      report.live.push({ stack: h.stack, holder: describeHolder(h) });
      continue;
    }
    if (!h && ageMs(file) <= UNREADABLE_STALE_MS) continue;
    const stack = h?.stack ?? n.replace(/\.json$/, "");
    if (opts.dryRun || removeStale(file, h))
      report.removed.push({ stack, holder: h ? describeHolder(h) : "unreadable lock file" });
  }
  return report;
}
