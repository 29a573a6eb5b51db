/**
 * The local platform: makes a StackSpec real on this machine with a run directory, cgroups (cpu, memory, block
 * IO), network namespaces and tc shaping, and tears it all down again.
 *
 * Every run writes a registry file `${os.tmpdir()}/ingestbench-runs/<runId>.json` BEFORE creating anything and
 * records each resource before it is created, so a run killed at any point can be collected by gc.ts.
 * provisionLocal installs no signal handlers: the runner owns signals and calls `teardown()` (or
 * `teardownAllLocalStacks()`); `withLocalStack` guarantees teardown around a function.
 *
 * Without root, without `ip`, or without a cgroup hierarchy the platform still works, unconstrained: hosts share
 * 127.0.0.1, limits are reported `enforced: false` and a "limits NOT enforced: <reason>" line goes to stderr.
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execa, execaSync } from "execa";
import { ProvisioningError } from "../../core/errors.ts";
import {
  capsFit,
  combineEnforcement,
  type AppliedLimits,
  type Enforcement,
  type HostLimits,
  type MachineSize,
  type StackSpec,
} from "../../core/limits.ts";
import {
  applyCgroupLimits,
  blockDeviceOf,
  cgroupProcsFiles,
  createHostCgroup,
  detectCgroupLayout,
  killCgroupProcesses,
  removeHostCgroup,
  type CgroupLayout,
} from "./cgroup.ts";
import { applyShaping, createTopology, removeNetns, removeRootLinks, type NetworkTopology } from "./netns.ts";
import { endStrays, ticksAt, type StrayQuery } from "./strays.ts";
import type { CgroupPaths, LocalHost, LocalStack, SpawnOptions } from "../../core/hosts.ts";
import { hostPrograms } from "../../core/limits.ts";

/** This machine, as the local platform's hosts share it: logical CPUs (os.availableParallelism) and memory (os.totalmem). */
export function thisMachine(): MachineSize {
  return { cores: os.availableParallelism(), memoryBytes: os.totalmem() };
}

/** Options of provisionLocal. */
export interface ProvisionLocalOptions {
  /** 6 lowercase hex chars; random by default */
  runId?: string;
  /** parent of the run directory `ingestbench-<runId>/`; default os.tmpdir() */
  tmpRoot?: string;
  /** user that owns each host's data dir (e.g. "postgres"), applied when running as root */
  dataOwner?: string;
  /** cgroup mount root (default /sys/fs/cgroup) */
  cgroupRoot?: string;
  /** the run's result record (results/.../run.json): if the owner is killed, gc marks it interrupted */
  resultRecord?: string;
}

/** The run registry: what a run created (or was about to create), for teardown and for gc of crashed runs. */
export interface RunRegistry {
  runId: string;
  ownerPid: number;
  /** field 22 of /proc/<ownerPid>/stat (start time in clock ticks), to detect pid reuse */
  ownerStartTicks?: number;
  createdAt: string;
  /** cgroup version the cgroup directories belong to */
  cgroupVersion?: "v1" | "v2";
  netns: string[];
  /** leaf cgroup directories `<controller>/ingestbench/<runId>/<host>` */
  cgroups: string[];
  /** directories removed recursively at teardown (the run directory) */
  dirs: string[];
  /** tmpfs mount points */
  mounts: string[];
  /** the run's result record, which gc marks interrupted when it still says "running" (see ProvisionLocalOptions) */
  resultRecord?: string;
}

/** Directory of run registry files: `${os.tmpdir()}/ingestbench-runs` (mode 1777 when created here). */
export function registryDir(): string {
  return path.join(os.tmpdir(), "ingestbench-runs");
}

/**
 * Directory of the machine-wide owner markers: `/run/ingestbench/owners` for root, else `/tmp/ingestbench-owners`
 * (mode 1777); `INGESTBENCH_OWNERS_DIR` overrides it. Unlike the registry it does not follow TMPDIR, so a gc started
 * with any TMPDIR sees every live run on the machine, including one between creating its cgroups and starting its
 * first process (which ownership by processes, runsOwnedElsewhere in gc.ts, cannot see).
 */
export function ownersDir(): string {
  if (process.env.INGESTBENCH_OWNERS_DIR) return process.env.INGESTBENCH_OWNERS_DIR;
  return process.getuid?.() === 0 ? "/run/ingestbench/owners" : "/tmp/ingestbench-owners";
}

/** An owner marker: `<ownersDir>/<runId>` holding the owner's pid and start ticks (see ownersDir). */
export type OwnerMarker = Pick<RunRegistry, "runId" | "ownerPid" | "ownerStartTicks">;

/** Write the owner marker of a run (before the run creates anything). */
export function writeOwnerMarker(m: OwnerMarker): void {
  const dir = ownersDir();
  if (mkdirSync(dir, { recursive: true }) !== undefined) chmodSync(dir, 0o1777);
  const file = path.join(dir, m.runId);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ ownerPid: m.ownerPid, ownerStartTicks: m.ownerStartTicks }) + "\n", {
    mode: 0o644,
  });
  renameSync(tmp, file);
}

/** The owner marker of run `runId`; undefined when there is none (or it is unreadable or malformed). */
export async function readOwnerMarker(runId: string): Promise<OwnerMarker | undefined> {
  try {
    const m = JSON.parse(await fs.readFile(path.join(ownersDir(), runId), "utf8")) as {
      ownerPid?: unknown;
      ownerStartTicks?: unknown;
    };
    if (typeof m.ownerPid !== "number") return undefined;
    return {
      runId,
      ownerPid: m.ownerPid,
      ...(typeof m.ownerStartTicks === "number" ? { ownerStartTicks: m.ownerStartTicks } : {}),
    };
  } catch {
    return undefined; // removed meanwhile, or half-written by a killed owner
  }
}

/** Every owner marker on the machine (unreadable or malformed ones are skipped). */
export async function readOwnerMarkers(): Promise<OwnerMarker[]> {
  const out: OwnerMarker[] = [];
  for (const name of await fs.readdir(ownersDir()).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{6}$/.test(name)) continue;
    const m = await readOwnerMarker(name);
    if (m) out.push(m);
  }
  return out;
}

/** Remove a run's owner marker; false when there was none. */
export async function removeOwnerMarker(runId: string): Promise<boolean> {
  try {
    await fs.unlink(path.join(ownersDir(), runId));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return false;
    throw err;
  }
}

/** Registry file of a run. */
export function registryPath(runId: string): string {
  return path.join(registryDir(), `${runId}.json`);
}

/** Write a registry atomically (temp file + rename). */
export function writeRegistry(reg: RunRegistry): void {
  // Shared by all users like /tmp itself (sticky, world-writable), so unprivileged runs can register too.
  if (mkdirSync(registryDir(), { recursive: true }) !== undefined) chmodSync(registryDir(), 0o1777);
  const file = registryPath(reg.runId);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(reg, null, 2) + "\n", { mode: 0o644 });
  renameSync(tmp, file);
}

/** Read a registry file; undefined when it does not exist or is not a registry. */
export async function readRegistry(file: string): Promise<RunRegistry | undefined> {
  try {
    const reg = JSON.parse(await fs.readFile(file, "utf8")) as RunRegistry;
    if (typeof reg.runId !== "string" || typeof reg.ownerPid !== "number") return undefined;
    return {
      ...reg,
      netns: reg.netns ?? [],
      cgroups: reg.cgroups ?? [],
      dirs: reg.dirs ?? [],
      mounts: reg.mounts ?? [],
    };
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT" || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** Start time of a process in clock ticks (/proc/<pid>/stat field 22), undefined when it does not exist. */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const v = fields[19]; // field 22 overall; fields after "comm)" start at field 3
    return v === undefined ? undefined : Number(v);
  } catch {
    return undefined; // no such process (or no procfs): treated as gone
  }
}

/** True when the registry's owner process is still running (same pid and, when recorded, same start time). */
export function isOwnerAlive(reg: Pick<RunRegistry, "ownerPid" | "ownerStartTicks">): boolean {
  try {
    process.kill(reg.ownerPid, 0);
  } catch (err) {
    if ((err as { code?: string }).code !== "EPERM") return false;
  }
  if (reg.ownerStartTicks === undefined) return true;
  const now = processStartTicks(reg.ownerPid);
  return now === undefined ? true : now === reg.ownerStartTicks;
}

/** Mount points listed in /proc/self/mountinfo (octal escapes decoded). */
export async function listMountPoints(): Promise<string[]> {
  const text = await fs.readFile("/proc/self/mountinfo", "utf8");
  return text
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((m): m is string => m !== undefined)
    .map((m) => m.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Unmount `dir` (and anything mounted below it) if mounted; retries, then detaches lazily. Idempotent. */
export async function unmountIfMounted(dir: string): Promise<boolean> {
  let any = false;
  for (let attempt = 0; attempt < 20; attempt++) {
    const mounted = (await listMountPoints()).filter((m) => m === dir || m.startsWith(dir + "/"));
    if (mounted.length === 0) return any;
    const target = mounted.sort((a, b) => b.length - a.length)[0]!;
    try {
      await execa("umount", attempt < 10 ? [target] : ["-l", target]);
      any = true;
    } catch (err) {
      if (attempt === 19) throw err;
      await sleep(100);
    }
  }
  return any;
}

/** Kill a process group: SIGTERM, wait up to graceMs, SIGKILL. Ignores groups that are gone. */
async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false; // ESRCH: the group is empty
    }
  };
  if (!alive()) return;
  try {
    process.kill(-pgid, "SIGTERM");
  } catch {
    return; // group vanished between the check and the signal
  }
  const start = Date.now();
  while (alive() && Date.now() - start < graceMs) await sleep(50);
  for (let i = 0; i < 100 && alive(); i++) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      return; // group vanished
    }
    await sleep(50);
  }
}

/**
 * `fs.rm(dir, { recursive: true, force: true })`; when it fails with ENOTEMPTY or EBUSY (a process still writes
 * into the tree), `before` (ending that process) and again, at most 5 times.
 */
export async function removeTree(dir: string, before?: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.rm(dir, { recursive: true, force: true });
      return;
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (before === undefined || attempt >= 5 || !["ENOTEMPTY", "EBUSY"].includes(code)) throw err;
      await before();
    }
  }
}

/** What removeRunResources removed, and the real errors it met. */
export interface RemovalReport {
  netns: string[];
  cgroups: string[];
  dirs: string[];
  mounts: string[];
  /** the run's processes outside its cgroups, ended by pid (./strays.ts; with `strays` only) */
  processes: number[];
  registry?: string;
  errors: Error[];
}

/**
 * Remove everything a registry lists, in order: processes in its cgroups, tmpfs mounts, namespaces (processes
 * in them killed first), cgroup directories, directories; then the registry file. Never throws: real errors are
 * collected in `errors`; things already gone are skipped.
 *
 * With `strays` (gc, for a run whose owner is gone): the run's processes outside its cgroups (./strays.ts) are ended
 * by pid first, and again whenever a directory will not go (ENOTEMPTY, EBUSY: something still writes into it), up to
 * 5 times. A live owner's teardown leaves them out: its own children are awaited or in its process groups.
 */
export async function removeRunResources(
  reg: RunRegistry,
  opts: { graceMs?: number; strays?: boolean } = {},
): Promise<RemovalReport> {
  const report: RemovalReport = { netns: [], cgroups: [], dirs: [], mounts: [], processes: [], errors: [] };
  const version = reg.cgroupVersion ?? "v1";
  const attempt = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      report.errors.push(
        new ProvisioningError("E_TEARDOWN", `${what}: ${(err as Error).message}`, { cause: err }),
      );
    }
  };
  const leafPaths = (leaf: string): CgroupPaths => ({
    version,
    dirs: version === "v2" ? { unified: leaf } : { leaf },
  });
  const query: StrayQuery | undefined = opts.strays
    ? {
        runId: reg.runId,
        dirs: reg.dirs,
        sinceTicks: reg.ownerStartTicks ?? (await ticksAt(Date.parse(reg.createdAt))) ?? 0,
      }
    : undefined;
  const endRunStrays = async (): Promise<void> => {
    if (!query) return;
    const r = await endStrays(query);
    for (const s of r.ended) if (!report.processes.includes(s.pid)) report.processes.push(s.pid);
    if (r.left.length > 0)
      throw new Error(
        `processes of the run outside its cgroups outlived SIGKILL: ${r.left.map((s) => `${s.pid} (${s.why})`).join(", ")}`,
      );
  };
  await attempt(`ending the processes of run ${reg.runId} outside its cgroups`, endRunStrays);
  for (const leaf of reg.cgroups)
    await attempt(
      `killing processes in ${leaf}`,
      async () => void (await killCgroupProcesses(leafPaths(leaf), opts)),
    );
  for (const m of [...reg.mounts].reverse()) {
    await attempt(`unmounting ${m}`, async () => {
      if (await unmountIfMounted(m)) report.mounts.push(m);
    });
  }
  // the namespaces side by side: each waits only on its own processes and `ip netns del`
  await Promise.all(
    reg.netns.map((ns) =>
      attempt(`removing netns ${ns}`, async () => {
        if (await removeNetns(ns, opts)) report.netns.push(ns);
      }),
    ),
  );
  if (reg.netns.length > 0)
    await attempt(
      `removing root-side links of run ${reg.runId}`,
      async () => void (await removeRootLinks(reg.runId)),
    );
  for (const leaf of reg.cgroups) {
    await attempt(
      `removing cgroup ${leaf}`,
      async () => void report.cgroups.push(...(await removeHostCgroup(leafPaths(leaf), opts))),
    );
  }
  for (const dir of reg.dirs) {
    await attempt(`removing ${dir}`, async () => {
      await unmountIfMounted(dir);
      try {
        await fs.access(dir);
      } catch {
        return; // already gone
      }
      await removeTree(dir, query ? endRunStrays : undefined);
      report.dirs.push(dir);
    });
  }
  if (report.errors.length === 0) {
    await attempt("removing the registry file", async () => {
      const file = registryPath(reg.runId);
      try {
        await fs.unlink(file);
        report.registry = file;
      } catch (err) {
        if ((err as { code?: string }).code !== "ENOENT") throw err;
      }
      await removeOwnerMarker(reg.runId);
    });
  }
  return report;
}

/** Live stacks of this process, for teardownAllLocalStacks. */
const liveStacks = new Set<LocalStack>();

/** Tear down every stack this process provisioned and has not torn down yet (for the runner's signal handlers). */
export async function teardownAllLocalStacks(): Promise<void> {
  const errors: unknown[] = [];
  for (const s of [...liveStacks]) {
    try {
      await s.teardown();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0)
    throw new ProvisioningError("E_TEARDOWN", `teardown of ${errors.length} local stack(s) failed`, {
      cause: new AggregateError(errors),
    });
}

interface Capabilities {
  root: boolean;
  ip: boolean;
  layout: CgroupLayout;
  /** why namespaces/cgroups are not used, when they are not */
  netnsReason?: string;
  cgroupReason?: string;
}

async function detectCapabilities(cgroupRoot: string | undefined): Promise<Capabilities> {
  const root = process.getuid?.() === 0;
  let ip = false;
  try {
    await execa("ip", ["-V"]);
    ip = true;
  } catch {
    ip = false; // no iproute2: run without namespaces
  }
  const layout = await detectCgroupLayout(cgroupRoot === undefined ? {} : { root: cgroupRoot });
  const caps: Capabilities = { root, ip, layout };
  if (!root) caps.netnsReason = "not running as root: no network namespaces, hosts share 127.0.0.1";
  else if (!ip) caps.netnsReason = "iproute2 `ip` not found: no network namespaces, hosts share 127.0.0.1";
  if (!root) caps.cgroupReason = "not running as root: no cgroups";
  else if (layout.version === "none") caps.cgroupReason = layout.reason;
  return caps;
}

function hasAnyLimit(l: HostLimits): boolean {
  return (
    l.cpu !== undefined || l.memoryBytes !== undefined || l.disk !== undefined || l.network !== undefined
  );
}

interface UserIds {
  uid: number;
  gid: number;
  home: string;
}

/**
 * host.spawn's shell (`/bin/sh -c SPAWN_SCRIPT ingestbench-spawn …spawnArgs`): joins the host's cgroups as root BEFORE
 * privileges are dropped (`ip netns exec` and `setpriv` exec in place, so the pid written is the pid of the final
 * command and of every child it forks), then execs the command only while its parent is still the harness that
 * spawned it (exit 125 otherwise): a harness killed between the fork and the joins leaves a shell outside the run's
 * cgroups, which must not start the program there (gc ends such a shell by pid, ./strays.ts).
 */
export const SPAWN_SCRIPT =
  'o=$1; n=$2; shift 2; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "ingestbench: cannot join cgroup $1" >&2; exit 126; }; ' +
  "shift; n=$((n-1)); done; read -r _ _ _ p _ < /proc/$$/stat; " +
  '[ "$p" = "$o" ] || { echo "ingestbench: the harness (pid $o) that spawned this is gone; not starting $1" >&2; exit 125; }; exec "$@"';

/** The arguments of SPAWN_SCRIPT after $0: the harness's pid, the cgroup.procs files to join, the command line. */
export function spawnArgs(ownerPid: number, procsFiles: string[], command: string[]): string[] {
  return [String(ownerPid), String(procsFiles.length), ...procsFiles, ...command];
}

/** Resolve a user name to uid, gid and home via `getent passwd` (synchronous: used inside spawn). */
function resolveUserSync(user: string): UserIds {
  let line: string;
  try {
    line = execaSync("getent", ["passwd", user]).stdout.trim();
  } catch (err) {
    throw new ProvisioningError("E_SPAWN_USER", `unknown user "${user}"`, { cause: err });
  }
  const [, , uid, gid, , home] = line.split(":");
  return { uid: Number(uid), gid: Number(gid), home: home ?? "/" };
}

/**
 * Provision a stack on this machine and return its hosts with verified limits.
 *
 * Per host: `<tmpRoot>/ingestbench-<runId>/<host>/data` (0755, owned by `dataOwner` when root; a tmpfs of
 * disk.tmpfsBytes when asked), a cgroup with cpu/memory/IO limits read back, a namespace with a control link
 * and a shaped data-plane link (see netns.ts). On failure everything created so far is removed and the error
 * (ProvisioningError) is rethrown. Installs no signal handlers.
 */
export async function provisionLocal(
  stack: StackSpec,
  opts: ProvisionLocalOptions = {},
): Promise<LocalStack> {
  const runId = opts.runId ?? randomBytes(3).toString("hex");
  if (!/^[0-9a-f]{6}$/.test(runId))
    throw new ProvisioningError("E_RUN_ID", `runId must be 6 lowercase hex chars, got "${runId}"`);
  const hostNames = Object.keys(stack.hosts);
  if (hostNames.length === 0)
    throw new ProvisioningError("E_STACK_HOSTS", `stack ${stack.name} has no hosts`);
  const caps = await detectCapabilities(opts.cgroupRoot);
  const useCgroups = caps.cgroupReason === undefined;
  const useNetns = caps.netnsReason === undefined;

  const reg: RunRegistry = {
    runId,
    ownerPid: process.pid,
    ownerStartTicks: processStartTicks(process.pid),
    createdAt: new Date().toISOString(),
    cgroupVersion: caps.layout.version === "v2" ? "v2" : "v1",
    netns: [],
    cgroups: [],
    dirs: [],
    mounts: [],
    ...(opts.resultRecord ? { resultRecord: opts.resultRecord } : {}),
  };
  try {
    await fs.access(registryPath(runId));
    throw new ProvisioningError("E_RUN_ID", `run ${runId} already has a registry at ${registryPath(runId)}`);
  } catch (err) {
    if (err instanceof ProvisioningError) throw err; // otherwise ENOENT: the id is free
  }
  writeOwnerMarker(reg);
  writeRegistry(reg);
  const record = (key: "netns" | "cgroups" | "dirs" | "mounts", value: string) => {
    if (!reg[key].includes(value)) reg[key].push(value);
    writeRegistry(reg);
  };

  /** process groups of spawned children (each child leads its own group: detached) */
  const spawnedGroups = new Set<number>();
  let torn: Promise<void> | undefined;
  const teardown = (): Promise<void> => {
    torn ??= (async () => {
      const errors: Error[] = [];
      const kills = await Promise.allSettled([...spawnedGroups].map((pgid) => killProcessGroup(pgid, 3000)));
      for (const k of kills) if (k.status === "rejected") errors.push(k.reason as Error);
      const report = await removeRunResources(reg);
      errors.push(...report.errors);
      liveStacks.delete(local);
      if (errors.length > 0) {
        throw new ProvisioningError(
          "E_TEARDOWN",
          `teardown of run ${runId} failed: ${errors.map((e) => e.message).join("; ")}`,
          {
            cause: new AggregateError(errors),
          },
        );
      }
    })();
    return torn;
  };

  const local: LocalStack = { stack, runId, hosts: {}, limits: {}, teardown };
  liveStacks.add(local);
  try {
    const tmpRoot = opts.tmpRoot ?? os.tmpdir();
    const runDir = path.join(tmpRoot, `ingestbench-${runId}`);
    record("dirs", runDir);
    await fs.mkdir(runDir, { mode: 0o755 });
    await fs.chmod(runDir, 0o755);

    let owner: { uid: number; gid: number } | undefined;
    const globalNotes: string[] = [];
    if (opts.dataOwner !== undefined) {
      const uid = Number((await execa("id", ["-u", opts.dataOwner])).stdout.trim());
      const gid = Number((await execa("id", ["-g", opts.dataOwner])).stdout.trim());
      if (caps.root || uid === process.getuid?.()) owner = { uid, gid };
      else globalNotes.push(`data dirs not chowned to ${opts.dataOwner}: not running as root`);
    }

    const topology: NetworkTopology | undefined = useNetns
      ? await createTopology(runId, hostNames, { onNetns: (ns) => record("netns", ns) })
      : undefined;
    const shaping = topology
      ? await applyShaping(
          topology,
          Object.fromEntries(hostNames.map((h) => [h, stack.hosts[h]!.limits.network])),
        )
      : {};

    for (const name of hostNames) {
      const spec = stack.hosts[name]!;
      const limits = spec.limits;
      const applied: Record<string, number | string> = {};
      const notes: string[] = [...globalNotes];
      const partial: string[] = [];
      let enforced: Enforcement = true;

      const hostDir = path.join(runDir, name);
      const dataDir = path.join(hostDir, "data");
      await fs.mkdir(dataDir, { recursive: true, mode: 0o755 });
      await fs.chmod(hostDir, 0o755);
      const tmpfsBytes = limits.disk?.tmpfsBytes;
      if (tmpfsBytes !== undefined) {
        if (caps.root) {
          record("mounts", dataDir);
          await execa("mount", [
            "-t",
            "tmpfs",
            "-o",
            `size=${tmpfsBytes},mode=0755`,
            `ingestbench-${runId}`,
            dataDir,
          ]);
          const st = await fs.statfs(dataDir);
          applied.tmpfsBytes = st.blocks * st.bsize;
        } else {
          enforced = false;
          notes.push("tmpfs data dir NOT mounted: not running as root");
        }
      }
      await fs.chmod(dataDir, 0o755);
      if (owner) await fs.chown(dataDir, owner.uid, owner.gid);

      const dev = await blockDeviceOf(dataDir);
      let cgroup: CgroupPaths = { version: caps.layout.version === "v2" ? "v2" : "v1", dirs: {} };
      const d = limits.disk;
      const wantsIo =
        d !== undefined &&
        [d.readIops, d.writeIops, d.readBytesPerSec, d.writeBytesPerSec].some((v) => v !== undefined);
      const wantsCgroup = limits.cpu !== undefined || limits.memoryBytes !== undefined || wantsIo;
      if (useCgroups) {
        const created = await createHostCgroup(caps.layout, runId, name, {
          onPlanned: (d) => record("cgroups", d),
        });
        cgroup = created.paths;
        notes.push(...created.notes); // a missing controller that a limit needs makes applyCgroupLimits report enforced: false
        const r = await applyCgroupLimits(cgroup, limits, {
          ...(dev.device !== undefined ? { blockDevice: dev.device } : {}),
          ...(dev.reason !== undefined ? { blockDeviceReason: dev.reason } : {}),
        });
        Object.assign(applied, r.applied);
        notes.push(...r.notes);
        partial.push(...(r.partial ?? []));
        enforced = combineEnforcement(enforced, r.enforced);
      } else if (wantsCgroup) {
        enforced = false;
        notes.push(`cpu/memory/disk limits NOT applied: ${caps.cgroupReason}`);
      }

      const net = topology?.hosts[name];
      const sh = shaping[name];
      if (sh) {
        Object.assign(applied, sh.applied);
        notes.push(...sh.notes);
        if (!sh.enforced) enforced = false;
      } else if (!topology && limits.network !== undefined) {
        enforced = false;
        notes.push(`network limits NOT applied: ${caps.netnsReason}`);
      }
      if (!useNetns) notes.push(caps.netnsReason ?? "no network namespaces");

      const procsFiles = cgroupProcsFiles(cgroup);
      const netns = net?.netns;
      const host: LocalHost = {
        name,
        ...(netns !== undefined ? { netns } : {}),
        address: net?.address ?? "127.0.0.1",
        controlAddress: net?.controlAddress ?? "127.0.0.1",
        ...(net?.interface !== undefined ? { interface: net.interface } : {}),
        ...(net?.peerInterface !== undefined && net.peerNetns !== undefined
          ? { peerInterface: net.peerInterface, peerNetns: net.peerNetns }
          : {}),
        cgroup,
        dataDir,
        ...(dev.device !== undefined && tmpfsBytes === undefined ? { blockDevice: dev.device } : {}),
        ...(spec.requested.programs !== undefined ? { programs: hostPrograms(spec) } : {}),
        spawn(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
          if (torn)
            throw new ProvisioningError("E_SPAWN", `run ${runId} is torn down; cannot spawn ${command}`);
          const env: Record<string, string | undefined> = { ...process.env };
          const prefix: string[] = [];
          if (options.user !== undefined && options.user !== os.userInfo().username) {
            if (!caps.root) {
              process.stderr.write(
                `ingestbench: WARNING cannot run ${command} as ${options.user} without root; running as ${os.userInfo().username}\n`,
              );
            } else {
              const u = resolveUserSync(options.user);
              Object.assign(env, { HOME: u.home, USER: options.user, LOGNAME: options.user });
              prefix.push("setpriv", `--reuid=${u.uid}`, `--regid=${u.gid}`, "--init-groups", "--");
            }
          }
          Object.assign(env, options.env ?? {});
          if (netns !== undefined) prefix.unshift("ip", "netns", "exec", netns);
          let file = command;
          let argv = args;
          if (procsFiles.length > 0) {
            file = "/bin/sh";
            argv = [
              "-c",
              SPAWN_SCRIPT,
              "ingestbench-spawn",
              ...spawnArgs(process.pid, procsFiles, [...prefix, command, ...args]),
            ];
          } else if (prefix.length > 0) {
            file = prefix[0]!;
            argv = [...prefix.slice(1), command, ...args];
          }
          const child = spawnChild(file, argv, {
            cwd: options.cwd ?? dataDir,
            env,
            stdio: options.stdio ?? ["ignore", "pipe", "pipe"],
            detached: true,
          });
          if (child.pid !== undefined) spawnedGroups.add(child.pid);
          return child;
        },
      };
      local.hosts[name] = host;
      if (!hasAnyLimit(limits)) enforced = true; // nothing was asked, so nothing is unenforced
      // a cap at or above the machine is written (harmless) but is not a cap: recorded "uncapped (≥ machine)"
      const uncapped = capsFit([spec], thisMachine()).uncapped[name] ?? [];
      for (const u of uncapped) notes.push(`uncapped (≥ machine): ${u}`);
      local.limits[name] = {
        requested: spec.requested,
        applied,
        enforced,
        notes,
        ...(enforced === "partial" ? { partial } : {}),
        ...(uncapped.length ? { uncapped } : {}),
      };
      if (!enforced) {
        const reasons = notes.filter((n) => /NOT|not running|cannot|no cgroup/i.test(n));
        process.stderr.write(
          `ingestbench: WARNING limits NOT enforced: ${name}: ${(reasons.length ? reasons : notes).join("; ")}\n`,
        );
      }
    }
  } catch (err) {
    try {
      await teardown();
    } catch (cleanupErr) {
      process.stderr.write(
        `ingestbench: cleanup after failed provisioning of run ${runId} failed: ${(cleanupErr as Error).message}\n`,
      );
    }
    if (err instanceof ProvisioningError) throw err;
    throw new ProvisioningError(
      "E_PROVISION_LOCAL",
      `provisioning stack ${stack.name} (run ${runId}) failed: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return local;
}

/**
 * Provision a stack, run `fn` with it, and tear it down in `finally` whatever happens. When `fn` throws and the
 * teardown throws too, the teardown error is written to stderr and `fn`'s error is rethrown.
 */
export async function withLocalStack<T>(
  stack: StackSpec,
  fn: (local: LocalStack) => Promise<T>,
  opts: ProvisionLocalOptions = {},
): Promise<T> {
  const local = await provisionLocal(stack, opts);
  let failed = false;
  try {
    return await fn(local);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    try {
      await local.teardown();
    } catch (err) {
      if (!failed) throw err;
      process.stderr.write(`ingestbench: teardown of run ${local.runId} failed: ${(err as Error).message}\n`);
    }
  }
}
