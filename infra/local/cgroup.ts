/**
 * Per-host cgroups for the local platform: create, apply HostLimits, read them back, read usage, remove.
 *
 * Layout: `<controller root>/ingestbench/<runId>/<host>`.
 * - cgroup v1 (Documentation/admin-guide/cgroup-v1/*.rst): one directory per controller (cpu, cpuacct, memory,
 *   blkio); the controllers may be mounted separately (as on this machine) or co-mounted ("cpu,cpuacct").
 * - cgroup v2 (Documentation/admin-guide/cgroup-v2.rst): one directory; "+cpu +memory +io" is written to
 *   cgroup.subtree_control of every ancestor from the root down so the leaf gets cpu.max, memory.max, io.max.
 *
 * Every limit is read back from the kernel after writing and reported in canonical keys that are the same for
 * v1 and v2: cfsQuotaUs, cfsPeriodUs, memoryLimitBytes, readIops, writeIops, readBps, writeBps, blockDevice.
 */
import { constants as fsc } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { ProvisioningError } from "../../core/errors.ts";
import type { HostLimits, Enforcement } from "../../core/limits.ts";
import type { CgroupPaths } from "../../core/hosts.ts";
import { parseSchedstat } from "../../core/schedstat.ts";
import { readKernelFile } from "./kernel-file.ts";

/** The v1 controllers a host cgroup is created in. */
export const V1_CONTROLLERS = ["cpu", "cpuacct", "memory", "blkio"] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

/** The v2 controllers enabled down the chain. */
export const V2_CONTROLLERS = ["cpu", "memory", "io"] as const;

/** Name of the directory under each controller root that holds all runs. */
export const CGROUP_PARENT = "ingestbench";

/** Default cgroup mount root. */
export const DEFAULT_CGROUP_ROOT = "/sys/fs/cgroup";

/**
 * Which cgroup hierarchy this machine offers.
 * - v1: `controllers` maps each available controller to its mount directory (co-mounted controllers share one).
 * - v2: `root` is the cgroup2 mount; `controllers` is the root's cgroup.controllers.
 * - none: no usable hierarchy (`reason` says why).
 */
export type CgroupLayout =
  | {
      version: "v1";
      root: string;
      controllers: Partial<Record<V1Controller, string>>;
      missing: V1Controller[];
    }
  | { version: "v2"; root: string; controllers: string[] }
  | { version: "none"; root: string; reason: string };

/** Cumulative usage counters of one host cgroup (units in the names). */
export interface CgroupUsage {
  /** CPU time consumed, nanoseconds (v1 cpuacct.usage; v2 cpu.stat usage_usec × 1000) */
  cpuUsageNs: number;
  /** CFS enforcement periods elapsed while the group was runnable (cpu.stat nr_periods) */
  nrPeriods: number;
  /** periods in which the group hit its quota (cpu.stat nr_throttled) */
  nrThrottled: number;
  /** total time throttled, nanoseconds (v1 cpu.stat throttled_time; v2 throttled_usec × 1000) */
  throttledNs: number;
  /** current memory charge, bytes (v1 memory.usage_in_bytes; v2 memory.current) */
  memoryBytes: number;
  /** high-water mark, bytes (v1 memory.max_usage_in_bytes; v2 memory.peak, kernel ≥ 5.19) */
  memoryPeakBytes: number;
  /**
   * working set, bytes: the charge less inactive file pages (memory.stat total_inactive_file on v1, inactive_file
   * on v2), as cAdvisor and the kubelet define it. The charge includes page cache that a database's writes fill
   * and the kernel reclaims at will, so it reaches the limit without any memory pressure; the working set does not.
   */
  memoryWorkingSetBytes: number;
  /**
   * anonymous memory, bytes: what the group's processes hold themselves (heaps, stacks), no page cache (v1 memory.stat
   * total_rss, transparent huge pages included; v2 memory.stat anon; cgroup-v1/memory.rst §5.2, cgroup-v2.rst
   * "memory.stat"); absent where memory.stat has neither. A process that streams a file keeps this flat while the
   * file's pages it read fill the page cache charged to the group (and, while they stay active, the working set).
   */
  memoryAnonBytes?: number;
  /** bytes/ops summed over all devices (v1 blkio.throttle.io_service_bytes / io_serviced; v2 io.stat) */
  ioReadBytes: number;
  ioWriteBytes: number;
  ioReadOps: number;
  ioWriteOps: number;
  /** fields whose kernel file was absent and are reported as 0 */
  unavailable: string[];
}

/** Result of applying limits to one cgroup: values read back, whether everything requested is in force, why not. */
export interface CgroupApplyResult {
  applied: Record<string, number | string>;
  /** "partial": applied, but cgroup v1 does not throttle buffered writes (reasons in `partial`; core/limits.ts Enforcement) */
  enforced: Enforcement;
  partial?: string[];
  notes: string[];
}

const DENIED = new Set(["EACCES", "EROFS", "EPERM"]);

function errnoOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err
    ? String((err as { code: unknown }).code)
    : undefined;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p, fsc.F_OK);
    return true;
  } catch {
    return false;
  }
}

async function readTrim(p: string): Promise<string> {
  return (await fs.readFile(p, "utf8")).trim();
}

async function readOptional(p: string): Promise<string | undefined> {
  try {
    return await readTrim(p);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw err;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Detect the cgroup hierarchy under `root` (default /sys/fs/cgroup).
 * v2 when `<root>/cgroup.controllers` exists and lists "cpu"; otherwise v1 when at least one of
 * `<root>/{cpu,cpuacct,memory,blkio}` is a cgroup directory (has cgroup.procs); otherwise "none".
 * `root` can point at a temp directory laid out like a hierarchy (tests).
 */
export async function detectCgroupLayout(opts: { root?: string } = {}): Promise<CgroupLayout> {
  const root = opts.root ?? DEFAULT_CGROUP_ROOT;
  const v2list = await readOptional(path.join(root, "cgroup.controllers"));
  if (v2list !== undefined && v2list.split(/\s+/).includes("cpu")) {
    return { version: "v2", root, controllers: v2list.split(/\s+/).filter(Boolean) };
  }
  const controllers: Partial<Record<V1Controller, string>> = {};
  const missing: V1Controller[] = [];
  for (const c of V1_CONTROLLERS) {
    const dir = path.join(root, c);
    if (await exists(path.join(dir, "cgroup.procs"))) controllers[c] = await fs.realpath(dir);
    else missing.push(c);
  }
  if (missing.length === V1_CONTROLLERS.length) {
    const reason =
      v2list !== undefined
        ? `cgroup2 at ${root} does not offer the cpu controller and no v1 controllers are mounted`
        : `no cgroup v1 controllers (cpu, cpuacct, memory, blkio) under ${root} and no cgroup2 with cpu`;
    return { version: "none", root, reason };
  }
  return { version: "v1", root, controllers, missing };
}

/** `<controllerRoot>/ingestbench/<runId>` for every controller root of the layout (deduplicated). */
export function cgroupRunDirs(layout: CgroupLayout, runId: string): string[] {
  return [...new Set(controllerRoots(layout).map((r) => path.join(r, CGROUP_PARENT, runId)))];
}

/** The directories that hold `ingestbench/` in this layout: one per v1 controller mount, or the v2 root. */
export function controllerRoots(layout: CgroupLayout): string[] {
  if (layout.version === "v1") return [...new Set(Object.values(layout.controllers))];
  if (layout.version === "v2") return [layout.root];
  return [];
}

/**
 * Create `ingestbench/<runId>/<host>` in every needed controller.
 * `onPlanned` is called with each leaf directory BEFORE it is created (so a run registry can record it first).
 * Missing controllers and EACCES/EROFS/EPERM are reported in `notes` with `complete: false`; other errors throw
 * ProvisioningError. The returned `paths.dirs` holds only the directories that exist.
 */
export async function createHostCgroup(
  layout: CgroupLayout,
  runId: string,
  host: string,
  opts: { onPlanned?: (dir: string) => void | Promise<void> } = {},
): Promise<{ paths: CgroupPaths; complete: boolean; notes: string[] }> {
  if (!/^[A-Za-z0-9_.-]+$/.test(runId) || !/^[A-Za-z0-9_.-]+$/.test(host)) {
    throw new ProvisioningError(
      "E_CGROUP_NAME",
      `invalid cgroup name component: run "${runId}", host "${host}"`,
    );
  }
  const notes: string[] = [];
  if (layout.version === "none") {
    return {
      paths: { version: "v1", dirs: {} },
      complete: false,
      notes: [`no cgroup hierarchy: ${layout.reason}`],
    };
  }
  if (layout.version === "v1") {
    const dirs: Record<string, string> = {};
    let complete = layout.missing.length === 0;
    for (const c of layout.missing)
      notes.push(`cgroup v1 controller "${c}" is not mounted under ${layout.root}`);
    for (const c of V1_CONTROLLERS) {
      const mount = layout.controllers[c];
      if (mount === undefined) continue;
      const leaf = path.join(mount, CGROUP_PARENT, runId, host);
      await opts.onPlanned?.(leaf);
      try {
        await fs.mkdir(leaf, { recursive: true });
        dirs[c] = leaf;
      } catch (err) {
        if (!DENIED.has(errnoOf(err) ?? "")) {
          throw new ProvisioningError("E_CGROUP_CREATE", `cannot create cgroup ${leaf}: ${String(err)}`, {
            cause: err,
          });
        }
        complete = false;
        notes.push(`cannot create cgroup ${leaf} (${errnoOf(err)}): ${c} limits not applied`);
      }
    }
    return { paths: { version: "v1", dirs }, complete, notes };
  }
  // v2: enable controllers from the root down, then create the leaf.
  const chain = [
    layout.root,
    path.join(layout.root, CGROUP_PARENT),
    path.join(layout.root, CGROUP_PARENT, runId),
  ];
  const leaf = path.join(layout.root, CGROUP_PARENT, runId, host);
  await opts.onPlanned?.(leaf);
  let complete = true;
  try {
    for (const dir of chain) {
      await fs.mkdir(dir, { recursive: true });
      const offered = await readOptional(path.join(dir, "cgroup.controllers"));
      const wanted = V2_CONTROLLERS.filter((c) => offered === undefined || offered.split(/\s+/).includes(c));
      for (const c of V2_CONTROLLERS) {
        if (!wanted.includes(c)) {
          complete = false;
          notes.push(`cgroup v2 controller "${c}" is not offered in ${dir}/cgroup.controllers`);
        }
      }
      if (wanted.length === 0) continue;
      const control = path.join(dir, "cgroup.subtree_control");
      const current = ((await readOptional(control)) ?? "").split(/\s+/).map((t) => t.replace(/^\+/, ""));
      const toEnable = wanted.filter((c) => !current.includes(c));
      if (toEnable.length > 0) await fs.writeFile(control, toEnable.map((c) => `+${c}`).join(" "));
    }
    await fs.mkdir(leaf, { recursive: true });
  } catch (err) {
    if (!DENIED.has(errnoOf(err) ?? "")) {
      throw new ProvisioningError("E_CGROUP_CREATE", `cannot create cgroup ${leaf}: ${String(err)}`, {
        cause: err,
      });
    }
    notes.push(`cannot create cgroup v2 ${leaf} (${errnoOf(err)}): limits not applied`);
    return {
      paths: { version: "v2", dirs: (await exists(leaf)) ? { unified: leaf } : {} },
      complete: false,
      notes,
    };
  }
  return { paths: { version: "v2", dirs: { unified: leaf } }, complete, notes };
}

/** Write one cgroup file; "denied" for EACCES/EROFS/EPERM, "missing" for ENOENT; other errors throw ProvisioningError. */
async function writeCgroupFile(file: string, value: string): Promise<"ok" | "denied" | "missing"> {
  try {
    await fs.writeFile(file, value);
    return "ok";
  } catch (err) {
    const code = errnoOf(err) ?? "";
    if (DENIED.has(code)) return "denied";
    if (code === "ENOENT") return "missing";
    throw new ProvisioningError("E_CGROUP_WRITE", `writing "${value}" to ${file} failed: ${String(err)}`, {
      cause: err,
    });
  }
}

/**
 * Make a v1 blkio group count the IO of `device` ("MAJ:MIN"). The kernel sets up blk-throttle for a disk only when a
 * throttle rule is first written for it, and until then blkio.throttle.io_service_bytes / io_serviced count nothing
 * for that disk in any group (seen on kernel 6.18 here: 2 MiB of direct writes to a fresh loop device read as 0;
 * older kernels counted always). Writing "MAJ:MIN 0" (0: no limit, so no rule is left) to
 * blkio.throttle.read_bps_device sets it up; it stays set up for the disk until reboot. Skipped when the file
 * already lists the device (a rule exists, so counting is on). Returns null, or a note saying why IO may read 0.
 */
export async function enableV1IoAccounting(blkioDir: string, device: string): Promise<string | null> {
  const f = path.join(blkioDir, "blkio.throttle.read_bps_device");
  if (v1DeviceValue((await readOptional(f)) ?? "", device) !== undefined) return null;
  const r = await writeCgroupFile(f, `${device} 0`);
  return r === "ok"
    ? null
    : `disk IO of ${device} may be observed as 0: blk-throttle not set up for it (${r} writing ${f})`;
}

/**
 * Lift the CPU cap of a host cgroup (v1 cpu.cfs_quota_us = -1, v2 cpu.max = "max"), for work after the measurement
 * such as the ledger's full-table queries, which would otherwise take minutes on a quarter core and say nothing
 * about ingest. Memory and IO caps stay. Returns false when nothing could be written (limits were not enforced).
 */
export async function liftCpuLimit(paths: CgroupPaths): Promise<boolean> {
  const d = paths.dirs;
  if (paths.version === "v2" && d.unified)
    return (await writeCgroupFile(path.join(d.unified, "cpu.max"), "max")) === "ok";
  if (paths.version === "v1" && d.cpu)
    return (await writeCgroupFile(path.join(d.cpu, "cpu.cfs_quota_us"), "-1")) === "ok";
  return false;
}

/**
 * Lift the disk IO caps of a host cgroup on `device` ("MAJ:MIN"), for the ledger's full-table reads after the
 * measurement (a soak's 18M rows on local-quarter-core's 3000-IOPS disk: the ledger's scan took 357 s and the content
 * check's index build 362 s, uncapped about 10 s). v1: "MAJ:MIN 0" into each blkio.throttle.*_device (0 removes the
 * rule; Documentation/admin-guide/cgroup-v1/blkio-controller.rst), v2: "MAJ:MIN riops=max wiops=max rbps=max
 * wbps=max" into io.max. Returns whether every write went through (false: nothing to lift, or a write failed).
 */
export async function liftIoLimits(paths: CgroupPaths, device: string): Promise<boolean> {
  const d = paths.dirs;
  if (paths.version === "v2" && d.unified)
    return (
      (await writeCgroupFile(
        path.join(d.unified, "io.max"),
        `${device} riops=max wiops=max rbps=max wbps=max`,
      )) === "ok"
    );
  if (paths.version !== "v1" || !d.blkio) return false;
  let ok = true;
  for (const f of ["read_iops_device", "write_iops_device", "read_bps_device", "write_bps_device"]) {
    if ((await writeCgroupFile(path.join(d.blkio, `blkio.throttle.${f}`), `${device} 0`)) !== "ok")
      ok = false;
  }
  return ok;
}

/**
 * Write a host's CPU cap back after liftCpuLimit: the quota and period read back when it was applied
 * (`AppliedLimits.applied.cfsQuotaUs` / `cfsPeriodUs`, µs), into v1 cpu.cfs_quota_us (the period was never changed)
 * or v2 cpu.max "quota period", then read back. Returns what the kernel holds afterwards, as the quota in µs (-1: no
 * cap); the caller compares it with `quotaUs`. A quota of -1 (none was applied) is left as it is.
 * @throws ProvisioningError E_CGROUP_WRITE on an unexpected write error
 */
export async function restoreCpuLimit(
  paths: CgroupPaths,
  quotaUs: number,
  periodUs: number,
): Promise<number | undefined> {
  const d = paths.dirs;
  if (paths.version === "v2" && d.unified) {
    const f = path.join(d.unified, "cpu.max");
    if (quotaUs > 0) await writeCgroupFile(f, `${quotaUs} ${periodUs}`);
    const q = (await readOptional(f))?.split(/\s+/)[0];
    return q === undefined ? undefined : q === "max" ? -1 : Number(q);
  }
  if (paths.version === "v1" && d.cpu) {
    const f = path.join(d.cpu, "cpu.cfs_quota_us");
    if (quotaUs > 0) await writeCgroupFile(f, String(quotaUs));
    const q = await readOptional(f);
    return q === undefined ? undefined : Number(q);
  }
  return undefined;
}

async function swapActive(): Promise<boolean> {
  const swaps = await readOptional("/proc/swaps");
  return swaps !== undefined && swaps.split("\n").length > 1;
}

/** Parse a v1 "MAJ:MIN value" throttle file (one line per device) and return the value for `device`. */
function v1DeviceValue(text: string, device: string): number | undefined {
  for (const line of text.split("\n")) {
    const [dev, value] = line.trim().split(/\s+/);
    if (dev === device && value !== undefined) return Number(value);
  }
  return undefined;
}

/** Parse a v2 io.max / io.stat line set into { "MAJ:MIN": { key: value } } ("max" → Infinity). */
export function parseV2KeyedLines(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const line of text.split("\n")) {
    const [dev, ...pairs] = line.trim().split(/\s+/);
    if (!dev || !/^\d+:\d+$/.test(dev)) continue;
    const entry: Record<string, number> = {};
    for (const p of pairs) {
      const [k, v] = p.split("=");
      if (k && v !== undefined) entry[k] = v === "max" ? Number.POSITIVE_INFINITY : Number(v);
    }
    out[dev] = entry;
  }
  return out;
}

/** Parse "key value" lines (cpu.stat, memory.stat). */
export function parseFlatKeyed(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^-?\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/**
 * Apply a host's cpu, memory and disk limits to its cgroup and read every value back from the kernel.
 *
 * v1: cpu.cfs_period_us then cpu.cfs_quota_us (Documentation/scheduler/sched-bwc.rst); memory.limit_in_bytes
 *     (admin-guide/cgroup-v1/memory.rst); blkio.throttle.{read,write}_{iops,bps}_device as "MAJ:MIN value"
 *     (admin-guide/cgroup-v1/blkio-controller.rst).
 * v2: cpu.max "quota period"; memory.max; io.max "MAJ:MIN riops= wiops= rbps= wbps=" (admin-guide/cgroup-v2.rst).
 * `blockDevice` is the "MAJ:MIN" of the whole disk holding the data dir (see blockDeviceOf); without it IO caps
 * are not applied (`blockDeviceReason` explains). Limits that cannot be written (missing controller, EACCES,
 * EROFS) leave the group unconstrained: enforced false, with a note. Unexpected errors throw ProvisioningError.
 */
export async function applyCgroupLimits(
  paths: CgroupPaths,
  limits: HostLimits,
  opts: { blockDevice?: string; blockDeviceReason?: string } = {},
): Promise<CgroupApplyResult> {
  const applied: Record<string, number | string> = {};
  const notes: string[] = [];
  const partial: string[] = [];
  let enforced = true;
  const fail = (what: string, why: string) => {
    enforced = false;
    notes.push(`${what} NOT applied: ${why}`);
  };
  const disk = limits.disk;
  const wantsIo =
    disk !== undefined &&
    [disk.readIops, disk.writeIops, disk.readBytesPerSec, disk.writeBytesPerSec].some((v) => v !== undefined);
  let ioDevice = opts.blockDevice;
  if (wantsIo && disk?.tmpfsBytes !== undefined) {
    notes.push("data dir is a tmpfs: disk IOPS/bandwidth caps do not apply to it and were not written");
    ioDevice = undefined;
  } else if (wantsIo && ioDevice === undefined) {
    fail("disk IO caps", opts.blockDeviceReason ?? "no block device for the data directory");
  }

  if (paths.version === "v1") {
    const d = paths.dirs;
    if (d.blkio !== undefined && opts.blockDevice !== undefined) {
      const why = await enableV1IoAccounting(d.blkio, opts.blockDevice);
      if (why !== null) notes.push(why);
    }
    if (limits.cpu) {
      if (d.cpu === undefined) fail("cpu quota", "no cpu cgroup");
      else {
        const r1 = await writeCgroupFile(path.join(d.cpu, "cpu.cfs_period_us"), String(limits.cpu.periodUs));
        const r2 =
          r1 === "ok"
            ? await writeCgroupFile(path.join(d.cpu, "cpu.cfs_quota_us"), String(limits.cpu.quotaUs))
            : r1;
        if (r2 !== "ok") fail("cpu quota", `${r2} writing cpu.cfs_* in ${d.cpu}`);
        else {
          applied.cfsPeriodUs = Number(await readTrim(path.join(d.cpu, "cpu.cfs_period_us")));
          applied.cfsQuotaUs = Number(await readTrim(path.join(d.cpu, "cpu.cfs_quota_us")));
        }
      }
    }
    if (limits.memoryBytes !== undefined) {
      if (d.memory === undefined) fail("memory limit", "no memory cgroup");
      else {
        const file = path.join(d.memory, "memory.limit_in_bytes");
        const r = await writeCgroupFile(file, String(limits.memoryBytes));
        if (r !== "ok") fail("memory limit", `${r} writing ${file}`);
        else {
          applied.memoryLimitBytes = Number(await readTrim(file));
          if (await swapActive()) {
            notes.push(
              "swap is active and memory.memsw.limit_in_bytes is not set: the group may swap beyond the memory limit",
            );
          }
        }
      }
    }
    if (wantsIo && ioDevice !== undefined && disk) {
      if (d.blkio === undefined) fail("disk IO caps", "no blkio cgroup");
      else {
        applied.blockDevice = ioDevice;
        const items: Array<[string, number | undefined, string]> = [
          ["blkio.throttle.read_iops_device", disk.readIops, "readIops"],
          ["blkio.throttle.write_iops_device", disk.writeIops, "writeIops"],
          ["blkio.throttle.read_bps_device", disk.readBytesPerSec, "readBps"],
          ["blkio.throttle.write_bps_device", disk.writeBytesPerSec, "writeBps"],
        ];
        for (const [file, value, key] of items) {
          if (value === undefined) continue;
          const f = path.join(d.blkio, file);
          const r = await writeCgroupFile(f, `${ioDevice} ${value}`);
          if (r !== "ok") {
            fail(`disk ${key}`, `${r} writing ${f}`);
            continue;
          }
          const back = v1DeviceValue(await readTrim(f), ioDevice);
          if (back === undefined) fail(`disk ${key}`, `${f} does not list ${ioDevice} after writing`);
          else applied[key] = back;
        }
        applied.writeThrottleScope = "direct-io-and-sync";
        const note =
          "cgroup v1 blkio throttling applies to direct IO and reads; buffered writes flushed later by kernel writeback " +
          "are not charged to the group and are NOT throttled (cgroup-v1/blkio-controller.rst)";
        notes.push(note);
        if (disk.writeIops !== undefined || disk.writeBytesPerSec !== undefined)
          partial.push(`disk write caps: ${note}`);
      }
    }
  } else {
    const dir = paths.dirs.unified;
    if (dir === undefined) {
      if (limits.cpu || limits.memoryBytes !== undefined || wantsIo)
        fail("cgroup limits", "no cgroup v2 directory");
    } else {
      if (limits.cpu) {
        const f = path.join(dir, "cpu.max");
        const r = await writeCgroupFile(f, `${limits.cpu.quotaUs} ${limits.cpu.periodUs}`);
        if (r !== "ok") fail("cpu quota", `${r} writing ${f}`);
        else {
          const [q, p] = (await readTrim(f)).split(/\s+/);
          applied.cfsQuotaUs = q === "max" ? -1 : Number(q);
          applied.cfsPeriodUs = Number(p);
        }
      }
      if (limits.memoryBytes !== undefined) {
        const f = path.join(dir, "memory.max");
        const r = await writeCgroupFile(f, String(limits.memoryBytes));
        if (r !== "ok") fail("memory limit", `${r} writing ${f}`);
        else {
          const v = await readTrim(f);
          applied.memoryLimitBytes = v === "max" ? -1 : Number(v);
          const swapMax = await readOptional(path.join(dir, "memory.swap.max"));
          if (swapMax !== undefined && swapMax !== "0" && (await swapActive())) {
            notes.push(
              "swap is active and memory.swap.max is not 0: the group may swap beyond the memory limit",
            );
          }
        }
      }
      if (wantsIo && ioDevice !== undefined && disk) {
        applied.blockDevice = ioDevice;
        const parts: string[] = [];
        if (disk.readIops !== undefined) parts.push(`riops=${disk.readIops}`);
        if (disk.writeIops !== undefined) parts.push(`wiops=${disk.writeIops}`);
        if (disk.readBytesPerSec !== undefined) parts.push(`rbps=${disk.readBytesPerSec}`);
        if (disk.writeBytesPerSec !== undefined) parts.push(`wbps=${disk.writeBytesPerSec}`);
        const f = path.join(dir, "io.max");
        const r = await writeCgroupFile(f, `${ioDevice} ${parts.join(" ")}`);
        if (r !== "ok") fail("disk IO caps", `${r} writing ${f}`);
        else {
          const back = parseV2KeyedLines(await readTrim(f))[ioDevice];
          if (back === undefined) fail("disk IO caps", `${f} does not list ${ioDevice} after writing`);
          else {
            const map: Array<[string, string, number | undefined]> = [
              ["riops", "readIops", disk.readIops],
              ["wiops", "writeIops", disk.writeIops],
              ["rbps", "readBps", disk.readBytesPerSec],
              ["wbps", "writeBps", disk.writeBytesPerSec],
            ];
            for (const [k, key, wanted] of map) {
              if (wanted === undefined) continue;
              const v = back[k];
              if (v === undefined || !Number.isFinite(v)) fail(`disk ${key}`, `${f} reads back ${k}=max`);
              else applied[key] = v;
            }
          }
        }
      }
    }
  }

  // Compare what the kernel reports with what was asked (rounding, clamping).
  const expect: Array<[string, number | undefined]> = [
    ["cfsQuotaUs", limits.cpu?.quotaUs],
    ["cfsPeriodUs", limits.cpu?.periodUs],
    ["memoryLimitBytes", limits.memoryBytes],
    ["readIops", ioDevice ? disk?.readIops : undefined],
    ["writeIops", ioDevice ? disk?.writeIops : undefined],
    ["readBps", ioDevice ? disk?.readBytesPerSec : undefined],
    ["writeBps", ioDevice ? disk?.writeBytesPerSec : undefined],
  ];
  for (const [key, wanted] of expect) {
    const got = applied[key];
    if (wanted !== undefined && got !== undefined && got !== wanted) {
      notes.push(`${key}: requested ${wanted}, kernel reports ${got}`);
    }
  }
  return {
    applied,
    enforced: enforced && partial.length > 0 ? "partial" : enforced,
    notes,
    ...(partial.length ? { partial } : {}),
  };
}

/**
 * The kernel's count of processes the OOM killer ended in the host's cgroup: cgroup v1 memory.oom_control `oom_kill N`
 * (Linux ≥ 4.13), cgroup v2 memory.events `oom_kill N` (Documentation/admin-guide/cgroup-v2.rst). Null when the
 * host has no memory cgroup or the file has no counter.
 */
export async function readOomKillCount(paths: CgroupPaths): Promise<{ count: number; file: string } | null> {
  const dir = paths.version === "v1" ? paths.dirs.memory : paths.dirs.unified;
  if (dir === undefined) return null;
  const file = path.join(dir, paths.version === "v1" ? "memory.oom_control" : "memory.events");
  const m = /^oom_kill (\d+)$/m.exec((await readOptional(file)) ?? "");
  return m ? { count: Number(m[1]), file } : null;
}

/** The cgroup.procs files a process must be written into to join the host's cgroup (one per distinct directory). */
export function cgroupProcsFiles(paths: CgroupPaths): string[] {
  return [...new Set(Object.values(paths.dirs))].map((d) => path.join(d, "cgroup.procs"));
}

/** Pids currently in any of the host's cgroup directories (union; missing directories count as empty). */
export async function listCgroupPids(paths: CgroupPaths): Promise<number[]> {
  const pids = new Set<number>();
  for (const file of cgroupProcsFiles(paths)) {
    const text = await readOptional(file);
    for (const tok of (text ?? "").split(/\s+/)) if (/^\d+$/.test(tok)) pids.add(Number(tok));
  }
  pids.delete(process.pid);
  return [...pids];
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (err) {
      if (errnoOf(err) !== "ESRCH") throw err;
    }
  }
}

/**
 * Kill every process in the host's cgroup: SIGTERM, wait up to `graceMs` (default 3000) for the group to empty,
 * then SIGKILL (v2: cgroup.kill when present) repeatedly until it is empty or `timeoutMs` (default 10000) passed,
 * which throws ProvisioningError. Returns the pids that were found.
 */
export async function killCgroupProcesses(
  paths: CgroupPaths,
  opts: { graceMs?: number; timeoutMs?: number } = {},
): Promise<number[]> {
  const graceMs = opts.graceMs ?? 3000;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const first = await listCgroupPids(paths);
  if (first.length === 0) return [];
  const seen = new Set(first);
  signalAll(first, "SIGTERM");
  const start = Date.now();
  while (Date.now() - start < graceMs) {
    await sleep(50);
    const left = await listCgroupPids(paths);
    left.forEach((p) => seen.add(p));
    if (left.length === 0) return [...seen];
  }
  while (Date.now() - start < graceMs + timeoutMs) {
    const left = await listCgroupPids(paths);
    if (left.length === 0) return [...seen];
    left.forEach((p) => seen.add(p));
    const killFile =
      paths.version === "v2" && paths.dirs.unified ? path.join(paths.dirs.unified, "cgroup.kill") : undefined;
    if (killFile && (await exists(killFile))) await writeCgroupFile(killFile, "1");
    signalAll(left, "SIGKILL");
    await sleep(50);
  }
  const left = await listCgroupPids(paths);
  if (left.length === 0) return [...seen];
  throw new ProvisioningError(
    "E_CGROUP_KILL",
    `processes ${left.join(", ")} survived SIGKILL in ${cgroupProcsFiles(paths).join(", ")}`,
  );
}

async function rmdirIdempotent(dir: string, opts: { ignoreNotEmpty: boolean }): Promise<boolean> {
  if (opts.ignoreNotEmpty) {
    // A cgroup directory with child groups answers EBUSY (not ENOTEMPTY): look for children first.
    try {
      if ((await fs.readdir(dir, { withFileTypes: true })).some((e) => e.isDirectory())) return false;
    } catch (err) {
      if (errnoOf(err) === "ENOENT") return false;
      throw err;
    }
  }
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      await fs.rmdir(dir);
      return true;
    } catch (err) {
      const code = errnoOf(err);
      if (code === "ENOENT") return false;
      if (code === "ENOTEMPTY" && opts.ignoreNotEmpty) return false;
      // A cgroup whose last task just exited can answer EBUSY for a moment.
      if (code === "EBUSY" && attempt < 39) {
        await sleep(50);
        continue;
      }
      if (code === "EBUSY" && opts.ignoreNotEmpty) return false;
      throw new ProvisioningError("E_CGROUP_REMOVE", `cannot remove cgroup ${dir}: ${String(err)}`, {
        cause: err,
      });
    }
  }
  return false;
}

/**
 * Remove a host cgroup: kill its processes (see killCgroupProcesses), rmdir each leaf, then the run directory
 * (when no other host is left in it), then `ingestbench/` (when empty). Idempotent: missing directories are fine.
 * Returns the directories actually removed; throws ProvisioningError on real failures.
 */
export async function removeHostCgroup(
  paths: CgroupPaths,
  opts: { graceMs?: number } = {},
): Promise<string[]> {
  await killCgroupProcesses(paths, opts);
  const removed: string[] = [];
  const leaves = [...new Set(Object.values(paths.dirs))];
  for (const leaf of leaves) if (await rmdirIdempotent(leaf, { ignoreNotEmpty: false })) removed.push(leaf);
  for (const leaf of leaves) {
    const runDir = path.dirname(leaf);
    if (path.basename(path.dirname(runDir)) !== CGROUP_PARENT) continue;
    if (await rmdirIdempotent(runDir, { ignoreNotEmpty: true })) removed.push(runDir);
    if (await rmdirIdempotent(path.dirname(runDir), { ignoreNotEmpty: true }))
      removed.push(path.dirname(runDir));
  }
  return removed;
}

/**
 * Remove a whole run directory `<root>/ingestbench/<runId>` (all host leaves below it, processes killed first).
 * Used by gc for leftovers. Idempotent; returns the directories removed.
 */
export async function removeCgroupRunDir(
  runDir: string,
  version: "v1" | "v2",
  opts: { graceMs?: number } = {},
): Promise<string[]> {
  let entries: string[];
  try {
    entries = (await fs.readdir(runDir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return [];
    throw err;
  }
  const removed: string[] = [];
  for (const host of entries) {
    const leaf = path.join(runDir, host);
    removed.push(
      ...(await removeHostCgroup({ version, dirs: version === "v2" ? { unified: leaf } : { leaf } }, opts)),
    );
  }
  if (await rmdirIdempotent(runDir, { ignoreNotEmpty: true })) removed.push(runDir);
  if (await rmdirIdempotent(path.dirname(runDir), { ignoreNotEmpty: true }))
    removed.push(path.dirname(runDir));
  return removed;
}

/**
 * The kernel files usage is read from, per hierarchy version, each with the key of the CgroupPaths directory it
 * lives in (v1: its controller; v2: "unified"). File names are unique across controllers, so parseCgroupUsage
 * takes them keyed by file name alone. Shared by the local reader and the remote observer's script.
 */
export const CGROUP_USAGE_FILES: Readonly<Record<"v1" | "v2", ReadonlyArray<{ dir: string; file: string }>>> =
  {
    v1: [
      { dir: "cpuacct", file: "cpuacct.usage" },
      { dir: "cpu", file: "cpu.stat" },
      { dir: "memory", file: "memory.usage_in_bytes" },
      { dir: "memory", file: "memory.max_usage_in_bytes" },
      { dir: "memory", file: "memory.stat" },
      { dir: "blkio", file: "blkio.throttle.io_service_bytes" },
      { dir: "blkio", file: "blkio.throttle.io_serviced" },
    ],
    v2: [
      { dir: "unified", file: "cpu.stat" },
      { dir: "unified", file: "memory.current" },
      { dir: "unified", file: "memory.peak" },
      { dir: "unified", file: "memory.stat" },
      { dir: "unified", file: "io.stat" },
    ],
  };

/**
 * Turn the text of a cgroup's usage files into cumulative counters (see CgroupUsage for sources and units).
 * `files` maps a file name of CGROUP_USAGE_FILES[version] (e.g. "cpuacct.usage", "cpu.stat", "io.stat") to its
 * text, untrimmed is fine; undefined (or a missing key) means the file is absent, and the fields it feeds are
 * reported as 0 and listed in `unavailable`. Formats: v1 Documentation/admin-guide/cgroup-v1/{cpuacct,memory,
 * blkio-controller}.rst and scheduler/sched-bwc.rst; v2 Documentation/admin-guide/cgroup-v2.rst. Pure; never throws.
 */
export function parseCgroupUsage(
  version: "v1" | "v2",
  files: Readonly<Record<string, string | undefined>>,
): CgroupUsage {
  const unavailable: string[] = [];
  const num = (v: number | undefined, field: string): number => {
    if (v === undefined || Number.isNaN(v)) {
      unavailable.push(field);
      return 0;
    }
    return v;
  };
  const text = (name: string): string | undefined => files[name]?.trim();
  const scalar = (name: string): number | undefined => {
    const t = text(name);
    return t === undefined ? undefined : Number(t);
  };

  if (version === "v1") {
    const cpuStat = parseFlatKeyed(text("cpu.stat") ?? "");
    const memStat = parseFlatKeyed(text("memory.stat") ?? "");
    const mem = text("memory.usage_in_bytes");
    const bytes = text("blkio.throttle.io_service_bytes");
    const ops = text("blkio.throttle.io_serviced");
    // "MAJ:MIN Read|Write|Sync|Async|Discard|Total value" lines plus a final "Total value" line: sum per device.
    const sumV1 = (t: string | undefined, op: "Read" | "Write"): number | undefined => {
      if (t === undefined) return undefined;
      let total = 0;
      for (const line of t.split("\n")) {
        const [dev, kind, value] = line.trim().split(/\s+/);
        if (dev && /^\d+:\d+$/.test(dev) && kind === op && value !== undefined) total += Number(value);
      }
      return total;
    };
    return {
      cpuUsageNs: num(scalar("cpuacct.usage"), "cpuUsageNs"),
      nrPeriods: num(cpuStat.nr_periods, "nrPeriods"),
      nrThrottled: num(cpuStat.nr_throttled, "nrThrottled"),
      throttledNs: num(cpuStat.throttled_time, "throttledNs"),
      memoryBytes: num(scalar("memory.usage_in_bytes"), "memoryBytes"),
      memoryPeakBytes: num(scalar("memory.max_usage_in_bytes"), "memoryPeakBytes"),
      memoryWorkingSetBytes: num(workingSet(mem, memStat.total_inactive_file), "memoryWorkingSetBytes"),
      ...(memStat.total_rss !== undefined ? { memoryAnonBytes: memStat.total_rss } : {}),
      ioReadBytes: num(sumV1(bytes, "Read"), "ioReadBytes"),
      ioWriteBytes: num(sumV1(bytes, "Write"), "ioWriteBytes"),
      ioReadOps: num(sumV1(ops, "Read"), "ioReadOps"),
      ioWriteOps: num(sumV1(ops, "Write"), "ioWriteOps"),
      unavailable,
    };
  }
  const cpuStat = parseFlatKeyed(text("cpu.stat") ?? "");
  const memStat = parseFlatKeyed(text("memory.stat") ?? "");
  const mem = text("memory.current");
  const ioText = text("io.stat");
  const io = ioText === undefined ? undefined : Object.values(parseV2KeyedLines(ioText));
  const sumV2 = (k: string) => (io === undefined ? undefined : io.reduce((acc, e) => acc + (e[k] ?? 0), 0));
  const us = (v: number | undefined) => (v === undefined ? undefined : v * 1000);
  return {
    cpuUsageNs: num(us(cpuStat.usage_usec), "cpuUsageNs"),
    nrPeriods: num(cpuStat.nr_periods, "nrPeriods"),
    nrThrottled: num(cpuStat.nr_throttled, "nrThrottled"),
    throttledNs: num(us(cpuStat.throttled_usec), "throttledNs"),
    memoryBytes: num(scalar("memory.current"), "memoryBytes"),
    memoryPeakBytes: num(scalar("memory.peak"), "memoryPeakBytes"),
    memoryWorkingSetBytes: num(workingSet(mem, memStat.inactive_file), "memoryWorkingSetBytes"),
    ...(memStat.anon !== undefined ? { memoryAnonBytes: memStat.anon } : {}),
    ioReadBytes: num(sumV2("rbytes"), "ioReadBytes"),
    ioWriteBytes: num(sumV2("wbytes"), "ioWriteBytes"),
    ioReadOps: num(sumV2("rios"), "ioReadOps"),
    ioWriteOps: num(sumV2("wios"), "ioWriteOps"),
    unavailable,
  };
}

/**
 * Read cumulative usage counters of a host cgroup (see CgroupUsage for sources and units; parsing in
 * parseCgroupUsage). Files that do not exist are reported as 0 and listed in `unavailable`; throws
 * ProvisioningError when the cgroup has no directories (limits were not enforced).
 */
export async function readCgroupUsage(paths: CgroupPaths): Promise<CgroupUsage> {
  if (Object.keys(paths.dirs).length === 0) {
    throw new ProvisioningError(
      "E_CGROUP_USAGE",
      "no cgroup directories to read usage from (limits not enforced)",
    );
  }
  const files: Record<string, string | undefined> = {};
  // read once per host per sample: synchronous reads of the in-memory cgroup files (./kernel-file.ts)
  for (const { dir, file } of CGROUP_USAGE_FILES[paths.version]) {
    const d = paths.dirs[dir];
    files[file] = d === undefined ? undefined : readKernelFile(path.join(d, file));
  }
  return parseCgroupUsage(paths.version, files);
}

/** usage − inactive file pages, never below 0; undefined when the usage is unknown. */
function workingSet(usage: string | undefined, inactiveFile: number | undefined): number | undefined {
  if (usage === undefined) return undefined;
  return Math.max(0, Number(usage) - (inactiveFile ?? 0));
}

/** Block device of a directory: `device` is "MAJ:MIN" of the whole disk, or undefined with `reason`. */
export interface BlockDeviceInfo {
  device?: string;
  /** kernel name of the disk, e.g. "vda" */
  name?: string;
  reason?: string;
}

/**
 * Resolve the whole disk that holds `dir`: stat(dir).dev → /sys/dev/block/MAJ:MIN; when that entry is a partition
 * (has a `partition` file) its parent disk is used, since blkio/io throttling is configured per disk.
 * Major 0 is an anonymous device (tmpfs, overlayfs, btrfs subvolume, FUSE): undefined with a reason.
 */
export async function blockDeviceOf(dir: string, opts: { sysfs?: string } = {}): Promise<BlockDeviceInfo> {
  const sysfs = opts.sysfs ?? "/sys";
  const st = await fs.stat(dir, { bigint: true });
  const dev = st.dev;
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  if (major === 0) {
    return {
      reason: `${dir} is on anonymous device 0:${minor} (tmpfs, overlayfs, btrfs subvolume or FUSE): no block device to throttle`,
    };
  }
  const entry = path.join(sysfs, "dev", "block", `${major}:${minor}`);
  if (!(await exists(entry)))
    return { reason: `${dir} is on ${major}:${minor}, which is not a block device in ${sysfs}/dev/block` };
  const real = await fs.realpath(entry);
  if (await exists(path.join(real, "partition"))) {
    const parent = path.dirname(real);
    const parentDev = await readOptional(path.join(parent, "dev"));
    if (parentDev === undefined)
      return { reason: `cannot find the disk holding partition ${major}:${minor}` };
    return { device: parentDev, name: path.basename(parent) };
  }
  return { device: `${major}:${minor}`, name: path.basename(real) };
}

/**
 * Each task (thread) of a host's cgroup with its run delay, ns: the tids listed in v1 `cpu/<leaf>/tasks` (or
 * cpuacct's) or v2 `cgroup.threads`, each read from /proc/<tid>/schedstat field 2 (core/schedstat.ts). Tasks that
 * exit between the two reads are skipped. Empty when the cgroup has no such directory.
 */
export async function readCgroupTaskWaits(paths: CgroupPaths): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const d = paths.dirs;
  const list =
    paths.version === "v2"
      ? d.unified && path.join(d.unified, "cgroup.threads")
      : (d.cpu ?? d.cpuacct) && path.join((d.cpu ?? d.cpuacct)!, "tasks");
  if (!list) return out;
  // every sample reads one file per task (a ClickHouse server has dozens of threads): synchronous reads of the
  // in-memory files (./kernel-file.ts)
  const text = readKernelFile(list);
  if (text === undefined) return out; // the cgroup is gone (teardown)
  for (const tid of text.split("\n").filter(Boolean).map(Number)) {
    try {
      const s = parseSchedstat(readKernelFile(`/proc/${tid}/schedstat`) ?? "");
      if (s) out.set(tid, s.waitNs);
    } catch {
      /* the task exited after the list was read */
    }
  }
  return out;
}
