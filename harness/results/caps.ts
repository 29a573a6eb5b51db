/**
 * Caps and normalisation: the sink host's CPU and memory caps as a run applied them (run.json `limits.<host>`),
 * rows/s per vCPU and per GiB of those caps, and the per-run figures both comparisons read from run records
 * (medians of finite values, the runs' rows/s, ledger totals, the natural order of cell ids).
 */
import {
  capsFit,
  type AppliedLimits,
  type DiskLimit,
  type HostLimits,
  type MachineSize,
  type StackSpec,
} from "../../core/limits.ts";
import { parseBytes, parseCpu } from "../../core/units.ts";
import { median } from "../stats/descriptive.ts";
import type { RunCaps, RunRecord } from "./types.ts";

/** The sink host's caps as applied: CPU in cores (cfsQuotaUs / cfsPeriodUs), memory in bytes; null when uncapped. */
export interface SinkCaps {
  cores: number | null;
  memoryBytes: number | null;
}

/** A finite number (not null, undefined, NaN or ±Infinity). */
export const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Median over runs of a per-run figure; runs where it is absent or not finite are left out (NaN when none is left). */
export const med = (runs: RunRecord[], f: (r: RunRecord) => number | null | undefined): number =>
  median(runs.map(f).filter(finite));

/** Cell ids in natural order ("batch=1000" before "batch=8000" before "batch=50000"). */
export const cellSort = (a: string, b: string): number => a.localeCompare(b, "en", { numeric: true });

/** cgroup v1 reports "no memory limit" as a number near 2^63. */
const UNLIMITED_BYTES = 2 ** 60;

/**
 * The sink host's caps from run.json `limits.<host>`: cores = applied cfsQuotaUs / cfsPeriodUs, memory = applied
 * memoryLimitBytes; when the host is enforced but a value was not read back, the requested value (parsed with
 * core/units.ts). Null when uncapped (absent, negative quota, or cgroup v1's "unlimited" near 2^63), and null when
 * the cap is at or above the machine of the run (run.json `environment.cores` / `memoryBytes`): such a cap is not a
 * cap ("uncapped (≥ machine)", docs/design.md), so rows/s per vCPU never divides by it.
 */
export function sinkCaps(run: RunRecord, host = "sink"): SinkCaps {
  const l = run.limits[host];
  if (!l) return { cores: null, memoryBytes: null };
  const q = l.applied.cfsQuotaUs;
  const p = l.applied.cfsPeriodUs;
  let cores = finite(q) && finite(p) && q > 0 && p > 0 ? q / p : null;
  const m = l.applied.memoryLimitBytes;
  let memoryBytes = finite(m) && m > 0 && m < UNLIMITED_BYTES ? m : null;
  if (l.enforced) {
    const req = l.requested;
    if (cores === null && req.cpu !== undefined && !("cfsQuotaUs" in l.applied)) {
      try {
        const c = parseCpu(req.cpu as Parameters<typeof parseCpu>[0]);
        cores = c.quotaUs / c.periodUs;
      } catch {
        /* not a cap we can read: leave uncapped */
      }
    }
    if (memoryBytes === null && req.memory !== undefined && !("memoryLimitBytes" in l.applied)) {
      try {
        memoryBytes = parseBytes(req.memory as string | number);
      } catch {
        /* idem */
      }
    }
  }
  const machine = run.environment;
  if (cores !== null && finite(machine?.cores) && machine.cores > 0 && cores >= machine.cores) cores = null;
  if (
    memoryBytes !== null &&
    finite(machine?.memoryBytes) &&
    machine.memoryBytes > 0 &&
    memoryBytes >= machine.memoryBytes
  )
    memoryBytes = null;
  return { cores, memoryBytes };
}

/** Median over runs of rows/s divided by a per-run cap (cores or GiB); null when no run has the cap. */
function perCap(runs: RunRecord[], cap: (c: SinkCaps) => number | null): number | null {
  const xs: number[] = [];
  for (const r of runs) {
    const c = cap(sinkCaps(r));
    const v = r.summary?.rowsPerSecond;
    if (c !== null && c > 0 && finite(v)) xs.push(v / c);
  }
  return xs.length ? median(xs) : null;
}

/** Median over runs of rows/s ÷ the sink's cores; null when no run is CPU-capped. */
export const perCore = (runs: RunRecord[]): number | null => perCap(runs, (c) => c.cores);

/** Median over runs of rows/s ÷ the sink's memory cap in GiB (2^30 bytes); null when no run is memory-capped. */
export const perGiB = (runs: RunRecord[]): number | null =>
  perCap(runs, (c) => (c.memoryBytes === null ? null : c.memoryBytes / 2 ** 30));

/** The runs' measured rows/s (summary.rowsPerSecond), runs without a finite figure left out. */
export const rowsPerSecondOf = (runs: RunRecord[]): number[] =>
  runs.map((r) => r.summary?.rowsPerSecond).filter(finite);

/**
 * The ledger of several runs added up (rows). Only runs that have a ledger count: a run that stopped before its
 * verifier ran (run.json `ledger: null`, e.g. an error at start) is listed in `withoutLedger`, never counted as
 * 0 lost; when no run has one, every figure is null ("no ledger"), not 0.
 */
export interface LedgerTotals {
  lost: number | null;
  duplicated: number | null;
  stored: number | null;
  sent: number | null;
  /** stored rows whose content differs from what was sent (core/fidelity.ts; a run without the check counts 0) */
  altered?: number | null;
  /** how many of the runs the figures add up (runs with a ledger) */
  ledgers?: number;
  /** run ids of the runs without a ledger (not in the figures) */
  withoutLedger?: string[];
  /** runs whose `sent` was inferred from the collector's own counter (`generator: none`, Ledger.inferred) */
  inferred?: number;
}

/**
 * Sum of run.json `ledger` lost, duplicated, stored, sent and altered over the runs that have a ledger (see
 * LedgerTotals); `inferred`: how many had an inferred sent (absent: none).
 */
export function ledgerTotals(runs: RunRecord[]): LedgerTotals {
  const withLedger = runs.filter((r) => r.ledger);
  const withoutLedger = runs.filter((r) => !r.ledger).map((r) => r.runId);
  const sum = (k: "lost" | "duplicated" | "stored" | "sent" | "altered"): number | null =>
    withLedger.length === 0 ? null : withLedger.reduce((s, r) => s + (r.ledger![k] ?? 0), 0);
  const inferred = withLedger.filter((r) => r.ledger?.inferred).length;
  return {
    lost: sum("lost"),
    duplicated: sum("duplicated"),
    stored: sum("stored"),
    sent: sum("sent"),
    altered: sum("altered"),
    ledgers: withLedger.length,
    withoutLedger,
    ...(inferred > 0 ? { inferred } : {}),
  };
}

/** The first finite, positive number among `keys` of an applied record. */
function appliedNumber(applied: Record<string, number | string>, ...keys: string[]): number | undefined {
  for (const k of keys) {
    const v = applied[k];
    if (finite(v) && v > 0) return v;
  }
  return undefined;
}

/**
 * The limits a host ran under, for the bottleneck: what the platform applied and read back (run.json
 * `limits.<host>.applied`: cfsQuotaUs/cfsPeriodUs, memoryLimitBytes or memoryBytes, readIops/writeIops,
 * readBps/writeBps or readBytesPerSec/writeBytesPerSec, tbfRateBytesPerSec). A limit the platform enforced without
 * reading a value back (e.g. an Azure VM size) falls back to the stack's parsed request `requested`; a host with
 * `enforced: false` keeps only what was read back. Caps at or above `machine` are dropped (not caps); cgroup v1's
 * "unlimited" memory and a negative quota are no caps. libvirt totals (DiskLimit.totalIops/totalBytesPerSec) are
 * kept when both directions were applied.
 */
export function appliedHostLimits(
  l: AppliedLimits | undefined,
  requested: HostLimits,
  machine: MachineSize,
): HostLimits {
  if (!l) return {};
  const a = l.applied;
  const trust = l.enforced !== false;
  const out: HostLimits = {};
  const q = a.cfsQuotaUs;
  const p = a.cfsPeriodUs;
  const cpu =
    finite(q) && finite(p)
      ? q > 0 && p > 0
        ? { quotaUs: q, periodUs: p }
        : undefined
      : trust
        ? requested.cpu
        : undefined;
  if (cpu && cpu.quotaUs / cpu.periodUs < machine.cores) out.cpu = cpu;
  const memRead = a.memoryLimitBytes ?? a.memoryBytes;
  const mem = finite(memRead)
    ? memRead > 0 && memRead < UNLIMITED_BYTES
      ? memRead
      : undefined
    : trust
      ? requested.memoryBytes
      : undefined;
  if (mem !== undefined && mem < machine.memoryBytes) out.memoryBytes = mem;
  const rd = requested.disk;
  const disk: DiskLimit = {};
  const pick = (keys: string[], asked: number | undefined): number | undefined => {
    const v = appliedNumber(a, ...keys);
    if (v !== undefined) return v;
    return trust &&
      asked !== undefined &&
      !keys.some((k) => k in a) &&
      !("blockDevice" in a || "blkioDevice" in a)
      ? asked
      : undefined;
  };
  const readIops = pick(["readIops"], rd?.readIops);
  const writeIops = pick(["writeIops"], rd?.writeIops);
  const readBytesPerSec = pick(["readBps", "readBytesPerSec"], rd?.readBytesPerSec);
  const writeBytesPerSec = pick(["writeBps", "writeBytesPerSec"], rd?.writeBytesPerSec);
  if (readIops !== undefined) disk.readIops = readIops;
  if (writeIops !== undefined) disk.writeIops = writeIops;
  if (readBytesPerSec !== undefined) disk.readBytesPerSec = readBytesPerSec;
  if (writeBytesPerSec !== undefined) disk.writeBytesPerSec = writeBytesPerSec;
  if (rd?.totalIops !== undefined && readIops !== undefined && writeIops !== undefined)
    disk.totalIops = rd.totalIops;
  if (rd?.totalBytesPerSec !== undefined && readBytesPerSec !== undefined && writeBytesPerSec !== undefined)
    disk.totalBytesPerSec = rd.totalBytesPerSec;
  if (Object.keys(disk).length) out.disk = disk;
  const rate =
    appliedNumber(a, "tbfRateBytesPerSec") ??
    (trust && !("tbfRateBytesPerSec" in a) ? requested.network?.bandwidthBytesPerSec : undefined);
  if (rate !== undefined) out.network = { ...requested.network, bandwidthBytesPerSec: rate };
  return out;
}

/**
 * Whether the caps of a stack's hosts that run at the same time (`hosts`, e.g. the provisioned ones) fit the machine
 * they share (core/limits.ts capsFit): local and docker stacks, whose hosts share this machine (or the engine's);
 * undefined for azure stacks, where each host is its own VM.
 */
export function stackCapsFit(
  stack: StackSpec,
  hosts: readonly string[],
  machine: MachineSize,
): RunCaps | undefined {
  if (stack.platform === "azure") return undefined;
  const specs = hosts.map((h) => stack.hosts[h]).filter((h) => h !== undefined);
  return {
    ...capsFit(specs, { cores: machine.cores, memoryBytes: machine.memoryBytes }),
    hosts: specs.map((h) => h.name),
  };
}

/**
 * A run's caps flags as shown in the terminal, compare and the report: "oversubscribed" (run.json
 * `caps.oversubscribed`), "partial" (a host with `enforced: "partial"`), "not enforced" (a host with
 * `enforced: false`), "uncapped (≥ machine)" (a host with a cap at or above the machine). Empty when none.
 */
export function capsFlags(run: Pick<RunRecord, "caps" | "limits" | "environment">): string[] {
  const out: string[] = [];
  if (run.caps?.oversubscribed) out.push("oversubscribed");
  const ls = Object.values(run.limits ?? {});
  if (ls.some((l) => l.enforced === false)) out.push("not enforced");
  if (ls.some((l) => l.enforced === "partial")) out.push("partial");
  // also for runs recorded before `uncapped` existed: an applied quota of at least the machine's cores
  const cores = run.environment?.cores;
  const atMachine = (l: (typeof ls)[number]): boolean => {
    const q = l.applied.cfsQuotaUs;
    const p = l.applied.cfsPeriodUs;
    return finite(q) && finite(p) && q > 0 && p > 0 && finite(cores) && cores > 0 && q / p >= cores;
  };
  if (ls.some((l) => l.uncapped?.length || atMachine(l)) || Object.keys(run.caps?.uncapped ?? {}).length)
    out.push("uncapped (≥ machine)");
  return out;
}
