/**
 * Caps and normalisation: the sink host's CPU and memory caps as a run applied them (run.json `limits.<host>`),
 * rows/s per vCPU and per GiB of those caps, and the per-run figures both comparisons read from run records
 * (medians of finite values, the runs' rows/s, ledger totals, the natural order of cell ids).
 */
import { parseBytes, parseCpu } from "../../core/units.ts";
import { median } from "../stats/descriptive.ts";
import type { RunRecord } from "./types.ts";

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
 * core/units.ts). Null when uncapped (absent, negative quota, or cgroup v1's "unlimited" near 2^63).
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
      } catch { /* not a cap we can read: leave uncapped */ }
    }
    if (memoryBytes === null && req.memory !== undefined && !("memoryLimitBytes" in l.applied)) {
      try {
        memoryBytes = parseBytes(req.memory as string | number);
      } catch { /* idem */ }
    }
  }
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
export const perGiB = (runs: RunRecord[]): number | null => perCap(runs, (c) => (c.memoryBytes === null ? null : c.memoryBytes / 2 ** 30));

/** The runs' measured rows/s (summary.rowsPerSecond), runs without a finite figure left out. */
export const rowsPerSecondOf = (runs: RunRecord[]): number[] => runs.map((r) => r.summary?.rowsPerSecond).filter(finite);

/** The ledger of several runs added up (rows; a run without a ledger counts 0). */
export interface LedgerTotals {
  lost: number;
  duplicated: number;
  stored: number;
  sent: number;
  /** stored rows whose content differs from what was sent (core/fidelity.ts; a run without the check counts 0) */
  altered?: number;
}

/** Sum of run.json `ledger` lost, duplicated, stored, sent and altered over the runs. */
export function ledgerTotals(runs: RunRecord[]): LedgerTotals {
  const sum = (k: keyof LedgerTotals): number => runs.reduce((s, r) => s + (r.ledger?.[k] ?? 0), 0);
  return { lost: sum("lost"), duplicated: sum("duplicated"), stored: sum("stored"), sent: sum("sent"), altered: sum("altered") };
}
