/**
 * Leftover collection for the local platform: removes what crashed or killed runs left behind (processes,
 * tmpfs mounts, network namespaces, cgroups, run directories), never touching a live run.
 *
 * 1. Registries (`${os.tmpdir()}/ingestbench-runs/<runId>.json`) whose owner process is gone (live ones too only
 *    with `includeLive: true`): everything they list is removed, then the file. The run's processes that its
 *    cgroups do not hold (started by the harness, or by host.spawn's shell before it joined them: ./strays.ts) are
 *    ended by pid first, and again while its directory will not go.
 * 2. By naming convention, for run ids without a live registry: namespaces `ib-<runId>-*`, cgroup directories
 *    `<controller>/ingestbench/<runId>`, and run directories `<tmpRoot>/ingestbench-<runId>` older than the expiry
 *    (the processes working in them that started after them ended first, as above);
 *    and the cell config files of deployed runs, `<tmpRoot>/ib-pulumi-config-<pid>-*`, whose process is gone.
 *
 * A run's registry is written before it creates anything, so a live run is always protected. Runs started with
 * a different TMPDIR keep their registry elsewhere; they are still recognised as live by their processes
 * (ownerElsewhere): a process in the run's cgroups whose parent lies outside them and is not init is a live
 * harness's child (a killed harness's children are re-parented to init), and such a run is left alone. Before its
 * first process, a run of another TMPDIR is known by its owner marker (platform.ts ownersDir), which does not follow
 * TMPDIR; the markers of dead owners are removed at the end.
 *
 * With `dryRun: true` nothing is removed, killed or rewritten: the report lists what the same call would remove
 * (what exists now of each dead registry's netns, cgroups, mounts and dirs, the registry files, the leftovers found
 * by name, the owner markers of dead owners, the records it would mark interrupted), by the same rules, owner
 * markers included.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ProvisioningError } from "../../core/errors.ts";
import { CGROUP_PARENT, controllerRoots, detectCgroupLayout, removeCgroupRunDir } from "./cgroup.ts";
import { listNetns, NETNS_PREFIX, removeNetns, removeRootLinks } from "./netns.ts";
import {
  isOwnerAlive,
  listMountPoints,
  ownersDir,
  readOwnerMarker,
  readOwnerMarkers,
  readRegistry,
  registryDir,
  registryPath,
  removeOwnerMarker,
  removeRunResources,
  removeTree,
  unmountIfMounted,
  type RunRegistry,
} from "./platform.ts";
import { endStrays, findStrays, ticksAt, type StrayQuery } from "./strays.ts";

/** Default age after which an ownerless run directory is collected (the stack file's default expiry, 4 h). */
export const DEFAULT_EXPIRY_MS = 4 * 60 * 60 * 1000;

/** Options of collectLeftovers. */
export interface CollectOptions {
  /** ignore the expiry of ownerless run directories; default false (live runs are still left alone) */
  all?: boolean;
  /** also remove runs whose owner process is alive (a benchmark running in another terminal); default false */
  includeLive?: boolean;
  /** ownerless run directories younger than this (ms, by mtime) are kept; default 4 h */
  expiryMs?: number;
  /** where run directories live; default os.tmpdir() */
  tmpRoot?: string;
  /** cgroup mount root; default /sys/fs/cgroup */
  cgroupRoot?: string;
  /** SIGTERM→SIGKILL grace for leftover processes, ms; default 3000 */
  graceMs?: number;
  /** remove nothing: report what would be removed (see the module doc); default false */
  dryRun?: boolean;
  /**
   * Awaited after the live runs are read and before leftovers are listed by name: the gap in which a run may start
   * (tests start one there to show it is spared).
   */
  beforeSweep?: () => Promise<void>;
}

/**
 * What collectLeftovers removed (absolute paths / names) — with dryRun, what it would remove — what it kept, and the
 * errors it met.
 */
export interface GcReport {
  /** true when nothing was removed: the lists say what would be */
  dryRun?: boolean;
  /** run ids whose registry was processed and removed */
  runs: string[];
  netns: string[];
  cgroups: string[];
  dirs: string[];
  mounts: string[];
  registries: string[];
  /** owner markers (platform.ts ownersDir) of dead owners without a registry here, removed (a registry's goes with it) */
  markers: string[];
  /** pids in the cgroups removed, ended with them, and the runs' processes outside them (./strays.ts), ended by pid
   *  (a dry run: that would be), each once */
  processes: number[];
  /** run ids left alone because their owner is alive */
  live: string[];
  /** result records (run.json) of killed runs that still said "running", now marked "interrupted" */
  records: string[];
  errors: Error[];
}

const RUN_ID = "[0-9a-f]{6}";

/** The parent pid of a process (/proc/<pid>/stat field 4, after the parenthesised command), or undefined when gone. */
async function parentPid(pid: number): Promise<number | undefined> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** Every pid in the cgroup.procs files under `dir` (recursively). */
async function cgroupPids(dir: string, into: Set<number>): Promise<void> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.isDirectory()) await cgroupPids(path.join(dir, e.name), into);
    else if (e.name === "cgroup.procs") {
      const text = await fs.readFile(path.join(dir, e.name), "utf8").catch(() => "");
      for (const line of text.split("\n")) if (/^\d+$/.test(line.trim())) into.add(Number(line.trim()));
    }
  }
}

/**
 * Run ids whose cgroups hold a process whose parent is outside the run's cgroups and is not init (pid 1): the
 * children of a live harness, whatever TMPDIR its registry is under (see the module doc).
 */
export async function runsOwnedElsewhere(cgroupRoot?: string): Promise<Set<string>> {
  const owned = new Set<string>();
  const layout = await detectCgroupLayout(cgroupRoot === undefined ? {} : { root: cgroupRoot }).catch(
    () => undefined,
  );
  if (!layout || layout.version === "none") return owned;
  const runIds = new Set<string>();
  for (const root of controllerRoots(layout)) {
    for (const name of await fs.readdir(path.join(root, CGROUP_PARENT)).catch(() => [] as string[])) {
      if (new RegExp(`^${RUN_ID}$`).test(name)) runIds.add(name);
    }
  }
  for (const runId of runIds) {
    const pids = new Set<number>();
    for (const root of controllerRoots(layout)) await cgroupPids(path.join(root, CGROUP_PARENT, runId), pids);
    for (const pid of pids) {
      const ppid = await parentPid(pid);
      if (ppid !== undefined && ppid > 1 && !pids.has(ppid) && (await parentPid(ppid)) !== undefined) {
        owned.add(runId);
        break;
      }
    }
  }
  return owned;
}

/**
 * Remove leftovers of dead runs (see the module doc). Idempotent; never throws for things already gone; real
 * errors are returned in `errors` (and the registry of a run with errors is kept for a later attempt).
 */
export async function collectLeftovers(opts: CollectOptions = {}): Promise<GcReport> {
  const all = opts.all ?? false;
  const expiryMs = opts.expiryMs ?? DEFAULT_EXPIRY_MS;
  const tmpRoot = opts.tmpRoot ?? os.tmpdir();
  const graceOpts = opts.graceMs === undefined ? {} : { graceMs: opts.graceMs };
  const dry = opts.dryRun ?? false;
  const report: GcReport = {
    ...(dry ? { dryRun: true } : {}),
    runs: [],
    netns: [],
    cgroups: [],
    dirs: [],
    mounts: [],
    registries: [],
    markers: [],
    processes: [],
    live: [],
    records: [],
    errors: [],
  };
  const ended = new Set<number>();
  /** the pids in `dirs` (cgroups about to be removed) into report.processes */
  const notePids = async (dirs: string[]): Promise<void> => {
    const pids = new Set<number>();
    for (const d of dirs) await cgroupPids(d, pids);
    for (const pid of pids)
      if (!ended.has(pid)) {
        ended.add(pid);
        report.processes.push(pid);
      }
  };
  const mounted = dry ? new Set(await listMountPoints().catch(() => [] as string[])) : new Set<string>();
  const attempt = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      // No iproute2 on this machine: there can be no namespaces or links of ours to collect.
      if (
        (err as { code?: string }).code === "ENOENT" &&
        (err as { command?: string }).command?.startsWith("ip ")
      )
        return;
      report.errors.push(new ProvisioningError("E_GC", `${what}: ${(err as Error).message}`, { cause: err }));
    }
  };

  // 1. Registries.
  const live = new Set<string>();
  let files: string[] = [];
  try {
    files = (await fs.readdir(registryDir())).filter((f) => new RegExp(`^${RUN_ID}\\.json$`).test(f));
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOENT") throw err;
  }
  for (const f of files) {
    const reg = await readRegistry(path.join(registryDir(), f));
    if (!reg) continue;
    if (!opts.includeLive && isOwnerAlive(reg)) {
      live.add(reg.runId);
      continue;
    }
    await attempt(`run ${reg.runId}`, async () => {
      await notePids(reg.cgroups);
      const r = dry
        ? await existingRunResources(reg, mounted)
        : await removeRunResources(reg, { ...graceOpts, strays: true });
      for (const pid of r.processes)
        if (!ended.has(pid)) {
          ended.add(pid);
          report.processes.push(pid);
        }
      report.netns.push(...r.netns);
      report.cgroups.push(...r.cgroups);
      report.dirs.push(...r.dirs);
      report.mounts.push(...r.mounts);
      if (r.registry) report.registries.push(r.registry);
      report.errors.push(...r.errors);
      report.runs.push(reg.runId);
      if (
        reg.resultRecord &&
        (dry ? await stillRunning(reg.resultRecord) : await markInterrupted(reg.resultRecord, reg.ownerPid))
      )
        report.records.push(reg.resultRecord);
    });
  }
  // Owner markers (platform.ts ownersDir) name the live runs of every TMPDIR, even before their first process.
  const markers = await readOwnerMarkers();
  if (!opts.includeLive) for (const m of markers) if (isOwnerAlive(m)) live.add(m.runId);
  if (!opts.includeLive) for (const runId of await runsOwnedElsewhere(opts.cgroupRoot)) live.add(runId);
  report.live = [...live];
  await opts.beforeSweep?.();
  // A leftover found by name is asked about again once it has been listed: a run writes its owner marker and its
  // registry before it creates anything (platform.ts), so a run that started after `live` was read has them by now.
  // Without this a gc beside a starting run removed the run's namespaces and links under it.
  const ownerless = async (runId: string): Promise<boolean> => {
    if (live.has(runId)) return false;
    if (opts.includeLive) return true;
    for (const owner of [await readOwnerMarker(runId), await readRegistry(registryPath(runId))]) {
      if (owner && isOwnerAlive(owner)) {
        live.add(runId);
        report.live.push(runId);
        return false;
      }
    }
    return true;
  };

  // 2a. Namespaces by name.
  await attempt("listing namespaces", async () => {
    const re = new RegExp(`^${NETNS_PREFIX}(${RUN_ID})-`);
    for (const ns of await listNetns()) {
      const runId = re.exec(ns)?.[1];
      if (runId === undefined || !(await ownerless(runId))) continue;
      await attempt(`removing netns ${ns}`, async () => {
        if (dry || (await removeNetns(ns, graceOpts))) report.netns.push(ns);
      });
    }
  });

  if (!dry)
    await attempt(
      "removing root-side links",
      async () => void (await removeRootLinks(undefined, async (id) => !(await ownerless(id)))),
    );

  // 2b. Cgroup run directories.
  await attempt("sweeping cgroups", async () => {
    const layout = await detectCgroupLayout(opts.cgroupRoot === undefined ? {} : { root: opts.cgroupRoot });
    if (layout.version === "none") return;
    for (const root of controllerRoots(layout)) {
      const parent = path.join(root, CGROUP_PARENT);
      let runs: string[];
      try {
        runs = (await fs.readdir(parent, { withFileTypes: true }))
          .filter((e) => e.isDirectory())
          .map((e) => e.name);
      } catch (err) {
        if ((err as { code?: string }).code === "ENOENT") continue;
        throw err;
      }
      for (const runId of runs) {
        if (!new RegExp(`^${RUN_ID}$`).test(runId) || !(await ownerless(runId))) continue;
        await attempt(`removing cgroup ${path.join(parent, runId)}`, async () => {
          const runDir = path.join(parent, runId);
          await notePids([runDir]);
          report.cgroups.push(
            ...(dry
              ? [...(await subdirs(runDir)), runDir]
              : await removeCgroupRunDir(runDir, layout.version as "v1" | "v2", graceOpts)),
          );
        });
      }
    }
  });

  // 2c. Run directories.
  await attempt(`sweeping ${tmpRoot}`, async () => {
    const re = new RegExp(`^ingestbench-(${RUN_ID})$`);
    for (const entry of await fs.readdir(tmpRoot, { withFileTypes: true })) {
      const runId = re.exec(entry.name)?.[1];
      if (runId === undefined || !entry.isDirectory() || !(await ownerless(runId))) continue;
      const dir = path.join(tmpRoot, entry.name);
      await attempt(`removing ${dir}`, async () => {
        const st = await fs.stat(dir);
        if (!all && Date.now() - st.mtimeMs < expiryMs) return;
        // no registry names the owner: the run's processes are those started since its directory was made
        const query: StrayQuery = {
          runId,
          dirs: [dir],
          sinceTicks: (await ticksAt(st.birthtimeMs || st.ctimeMs)) ?? 0,
        };
        const endRunStrays = async (): Promise<void> => {
          const found = dry
            ? (await findStrays(query)).map((s) => ({ pid: s.pid }))
            : (await endStrays(query)).ended;
          for (const { pid } of found)
            if (!ended.has(pid)) {
              ended.add(pid);
              report.processes.push(pid);
            }
        };
        await endRunStrays();
        if (dry ? mounted.has(dir) : await unmountIfMounted(dir)) report.mounts.push(dir);
        if (!dry) await removeTree(dir, endRunStrays);
        report.dirs.push(dir);
      });
    }
  });

  // 2d. Cell config files of deployed runs (harness/provision/provisioner.ts writeCellConfigFile:
  //     `ib-pulumi-config-<pid>-XXXXXX`) whose harness process is gone.
  await attempt(`sweeping ${tmpRoot} for cell config files`, async () => {
    const re = /^ib-pulumi-config-(\d+)-/;
    for (const entry of await fs.readdir(tmpRoot, { withFileTypes: true })) {
      const pid = re.exec(entry.name)?.[1];
      if (
        pid === undefined ||
        !entry.isDirectory() ||
        (isOwnerAlive({ ownerPid: Number(pid) }) && !opts.includeLive)
      )
        continue;
      const dir = path.join(tmpRoot, entry.name);
      await attempt(`removing ${dir}`, async () => {
        if (!dry) await fs.rm(dir, { recursive: true, force: true });
        report.dirs.push(dir);
      });
    }
  });

  // 2d'. Half-written registry and owner-marker files (platform.ts writes `<file>.<pid>.tmp`, then renames it): a
  //      harness killed between the two leaves the temp file; its writer's pid names whose it is.
  for (const dir of [registryDir(), ownersDir()]) {
    await attempt(`sweeping ${dir} for half-written files`, async () => {
      const re = new RegExp(`^${RUN_ID}(?:\\.json)?\\.(\\d+)\\.tmp$`);
      for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
        const pid = re.exec(name)?.[1];
        if (pid === undefined || (isOwnerAlive({ ownerPid: Number(pid) }) && !opts.includeLive)) continue;
        const file = path.join(dir, name);
        if (!dry) await fs.rm(file, { force: true });
        report.registries.push(file);
      }
    });
  }

  // 2e. Owner markers of runs now collected (their owner is gone, or includeLive).
  if (report.errors.length === 0) {
    for (const m of markers) {
      // a collected registry's marker went with it (platform.ts removeRunResources)
      if (live.has(m.runId) || (dry && report.runs.includes(m.runId))) continue;
      await attempt(`removing the owner marker of run ${m.runId}`, async () => {
        if (dry || (await removeOwnerMarker(m.runId))) report.markers.push(path.join(ownersDir(), m.runId));
      });
    }
  }

  report.netns = [...new Set(report.netns)];
  report.cgroups = [...new Set(report.cgroups)];
  report.dirs = [...new Set(report.dirs)];
  report.mounts = [...new Set(report.mounts)];
  return report;
}

/** The subdirectories of `dir` (absolute), none when it is gone. */
async function subdirs(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}

const exists = (p: string): Promise<boolean> =>
  fs.access(p).then(
    () => true,
    () => false,
  );

/**
 * For a dry run: what removeRunResources (platform.ts) would remove of a dead run's registry, in its report's shape —
 * the netns, cgroups and dirs that exist now, the mounts that are mounted (`mounted`: the machine's mount points),
 * the registry file. Its processes are killed with its cgroups.
 */
async function existingRunResources(
  reg: RunRegistry,
  mounted: ReadonlySet<string>,
): Promise<Awaited<ReturnType<typeof removeRunResources>>> {
  const netns = new Set(reg.netns.length ? await listNetns() : []);
  const keep = async (paths: string[]): Promise<string[]> =>
    (await Promise.all(paths.map(async (p) => ((await exists(p)) ? p : null)))).filter(
      (p): p is string => p !== null,
    );
  const strays = await findStrays({
    runId: reg.runId,
    dirs: reg.dirs,
    sinceTicks: reg.ownerStartTicks ?? (await ticksAt(Date.parse(reg.createdAt))) ?? 0,
  });
  return {
    netns: reg.netns.filter((n) => netns.has(n)),
    cgroups: await keep(reg.cgroups),
    dirs: await keep(reg.dirs),
    mounts: reg.mounts.filter((m) => mounted.has(m)),
    processes: strays.map((s) => s.pid),
    registry: registryPath(reg.runId),
    errors: [],
  };
}

/** Whether a result record still says "running" (what markInterrupted would rewrite). */
async function stillRunning(file: string): Promise<boolean> {
  try {
    return (JSON.parse(await fs.readFile(file, "utf8")) as { status?: string }).status === "running";
  } catch {
    return false;
  }
}

/**
 * A killed run never wrote its final record: its run.json still says "running". Mark it "interrupted" with the reason,
 * keeping everything it holds (its series.jsonl, appended as it ran, is untouched), so that results and comparisons
 * do not count a dead run as running. Written atomically (temporary file, rename).
 * @returns true when the record was rewritten; false when it is gone, unreadable, or already final
 */
export async function markInterrupted(file: string, ownerPid: number): Promise<boolean> {
  let record: { status?: string; finishedAt?: string | null; error?: unknown };
  try {
    record = JSON.parse(await fs.readFile(file, "utf8")) as typeof record;
  } catch {
    return false;
  }
  if (record.status !== "running") return false;
  const at = new Date().toISOString();
  record.status = "interrupted";
  record.finishedAt = at;
  record.error = {
    code: "E_KILLED",
    kind: "run",
    message: `the harness process (pid ${ownerPid}) died without finishing this run (e.g. SIGKILL); ingestbench gc removed what it left at ${at}; series.jsonl has what it measured`,
  };
  const tmp = `${file}.gc-${process.pid}`;
  await fs.writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`);
  await fs.rename(tmp, file);
  return true;
}
