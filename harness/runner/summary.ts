/**
 * Turns a run's series into its summary, following docs/design.md, "Rules for the numbers": throughput is what the sink
 * confirmed between two timed count queries divided by the real elapsed time between them (query midpoints),
 * per-window rates are kept, and the binding resource is named from observations.
 */
import type { HostLimits } from "../../core/limits.ts";
import type { HostWindow } from "../observers/types.ts";
import type { Contention, HostContention, SeriesPoint, Summary } from "../results/types.ts";
import { mean, median, quantile } from "../stats/descriptive.ts";
import { findBottleneck } from "./bottleneck.ts";
import { pct } from "../../ui/format.ts";

export interface SummaryInput {
  series: SeriesPoint[];
  /** mean encoded bytes per row as sent */
  bytesPerRow: number;
  /** why the bytes sent are not known (the collector made the events: ./self-load.ts); then bytesPerRow is ignored */
  bytesUnknown?: string;
  /**
   * mean bytes of the log line per row as sent (./generator-group.ts logBytesPerRowOf): the text, not its wire
   * encoding; null or absent when the generators did not count it, ignored with bytesUnknown
   */
  logBytesPerRow?: number | null;
  /** per host, the limits applied and read back (harness/results/caps.ts appliedHostLimits), not the stack file's requests */
  limits: Record<string, HostLimits>;
  sinkHosts: string[];
  clientHost: string;
  machineCores: number;
  /** events/s the generators were asked to send in total (open loop), or undefined for a closed loop ("max") */
  offeredPerSec?: number;
  /** the ledger's distinct/stored, when known: the headline rate counts distinct rows only (1 = no duplicates) */
  distinctShare?: number;
}

const MiB = 2 ** 20;

/**
 * Log MiB/s of a sample (SeriesPoint.logMibPerSec): its rows/s × the mean log bytes per row as sent by then
 * (./generator-group.ts GeneratorGroup.logBytesPerRowAt) ÷ 2^20. Null when either is not known.
 */
export function logMibPerSec(
  rowsPerSec: number | null,
  logBytesPerRow: number | null | undefined,
): number | null {
  return rowsPerSec === null || logBytesPerRow === null || logBytesPerRow === undefined
    ? null
    : (rowsPerSec * logBytesPerRow) / MiB;
}

/** A host whose wait share (HostContention.share) reaches this over the measurement phase makes the run `contended`. */
export const CONTENDED = 0.1;
/** Steal time at or above this share of all CPU time makes the run `contended` (the hypervisor ran others). */
export const STEAL_CONTENDED = 0.05;

/**
 * Contention over the measurement phase (docs/design.md, "Contention"): per host, Σ run delay and Σ wait (run delay
 * less throttled time) per second of wall time and the wait's share of runnable time; the machine's PSI and steal;
 * the harness's CPU. Undefined when no window carries a run delay (remote observers, older series).
 */
export function contentionOf(
  measure: readonly SeriesPoint[],
  hosts: readonly string[],
): Contention | undefined {
  const out: Record<string, HostContention> = {};
  const reasons: string[] = [];
  for (const host of hosts) {
    const ws = measure
      .map((p) => p.hosts[host])
      .filter((w) => w?.runDelayMs !== undefined && w.dtMs !== undefined);
    if (!ws.length) continue;
    const wallS = ws.reduce((s, w) => s + w!.dtMs!, 0) / 1000;
    const delay = ws.reduce((s, w) => s + w!.runDelayMs!, 0);
    const wait = ws.reduce((s, w) => s + (w!.contentionMs ?? 0), 0);
    const cpuMs = ws.reduce((s, w) => s + w!.cpuCores * w!.dtMs!, 0);
    const share = wait + cpuMs > 0 ? wait / (wait + cpuMs) : 0;
    out[host] = {
      runDelayMsPerSec: wallS > 0 ? delay / wallS : 0,
      waitMsPerSec: wallS > 0 ? wait / wallS : 0,
      share,
    };
    if (share >= CONTENDED)
      reasons.push(
        `${host} waited ${out[host]!.waitMsPerSec.toFixed(0)} ms/s for a CPU while not throttled by its own cap (${pct(share)} of its runnable time)`,
      );
  }
  if (!Object.keys(out).length) return undefined;
  const machine = measure.map((p) => p.machine).filter((m) => m !== undefined);
  const meanOf = (f: (m: NonNullable<SeriesPoint["machine"]>) => number | null): number | null => {
    const xs = machine.map(f).filter((x): x is number => x !== null);
    return xs.length ? mean(xs) : null;
  };
  const psi = meanOf((m) => m.psiCpuSomeShare);
  const steal = meanOf((m) => m.stealShare);
  if (steal !== null && steal >= STEAL_CONTENDED) reasons.push(`steal ${pct(steal, 1)} of CPU time`);
  if (reasons.length && psi !== null) reasons.push(`CPU pressure (PSI some) ${pct(psi)} of the time`);
  return {
    contended: reasons.length > 0,
    reasons,
    hosts: out,
    psiCpuSomeShare: psi,
    stealShare: steal,
    harnessCores: meanOf((m) => m.harnessCores),
  };
}

/**
 * The sink host's figures over the measurement windows `sink` of `measuredSeconds`, in which `storedInWindow` rows
 * were stored: its cores, CPU per 1000 rows, CFS throttling (null without a CPU cap in `limits`), network, disk
 * and memory.
 */
function sinkFigures(
  sink: HostWindow[],
  limits: HostLimits | undefined,
  measuredSeconds: number,
  storedInWindow: number,
): Pick<
  Summary,
  | "sinkCores"
  | "cpuMsPer1000Rows"
  | "throttledShare"
  | "sinkNetworkMbitPerSecond"
  | "sinkDiskWriteMiBPerSecond"
  | "sinkDiskWriteIops"
  | "sinkMemoryPeakBytes"
  | "sinkMemoryWorkingSetBytes"
> {
  const sinkCores = mean(sink.map((w) => w.cpuCores));
  const periods = sink.reduce((s, w) => s + w.periods, 0);
  const throttled = sink.reduce((s, w) => s + w.throttledPeriods, 0);
  const cpuSeconds = sinkCores * measuredSeconds;
  return {
    sinkCores,
    cpuMsPer1000Rows: storedInWindow > 0 ? (cpuSeconds * 1000) / (storedInWindow / 1000) : Number.NaN,
    throttledShare: limits?.cpu ? (periods > 0 ? throttled / periods : 0) : null,
    sinkNetworkMbitPerSecond:
      (mean(sink.map((w) => Math.max(w.netRxBytesPerSec, w.netTxBytesPerSec))) * 8) / 1e6,
    sinkDiskWriteMiBPerSecond: mean(sink.map((w) => w.ioWriteBytesPerSec)) / MiB,
    sinkDiskWriteIops: mean(sink.map((w) => w.ioWriteOpsPerSec)),
    sinkMemoryPeakBytes: Math.max(0, ...sink.map((w) => w.memoryPeakBytes)),
    sinkMemoryWorkingSetBytes: Math.max(0, ...sink.map((w) => w.memoryWorkingSetBytes)),
  };
}

/**
 * @throws Error when the series has fewer than two measurement-phase samples (nothing can be divided)
 */
export function computeSummary(input: SummaryInput): Summary {
  const { series } = input;
  const measure = series.filter((p) => p.phase === "measure");
  // The measurement opens at the last warmup sample, so that the first window is counted too.
  const firstMeasure = series.indexOf(measure[0]!);
  const start = firstMeasure > 0 ? series[firstMeasure - 1]! : measure[0];
  const end = measure[measure.length - 1];
  if (!start || !end || end === start) {
    throw new Error(`summary needs at least two samples in the measurement phase, got ${measure.length}`);
  }
  const measuredSeconds = (end.t - start.t) / 1000;
  const storedRowsPerSecond = (end.stored - start.stored) / measuredSeconds;
  // duplicates are spread pro rata over the run: the count samples cannot tell when a duplicate landed
  const share = input.distinctShare ?? 1;
  const rowsPerSecond = storedRowsPerSecond * share;
  const windowRates = measure.map((p) => p.rowsPerSec).filter((r): r is number => r !== null);

  const windows: Record<string, HostWindow[]> = {};
  for (const p of measure) {
    for (const [host, w] of Object.entries(p.hosts)) (windows[host] ??= []).push(w);
  }
  const sinkName = input.sinkHosts[input.sinkHosts.length - 1]!;
  const lags = measure.map((p) => p.lagMs).filter((l): l is number => l !== null);
  const backlogs = measure
    .map((p) => p.backlogLagMs)
    .filter((l): l is number => l !== null && l !== undefined);
  // the drain ends at the first point from the load's end on that holds the final count (the points are settled
  // exact where the verifier settles them): the samples after it only confirmed it while the completion check read
  const after = series.slice(series.indexOf(end));
  const final = after.at(-1)!.stored;
  const drained = after.find((p) => p.stored >= final)!;
  const contention = contentionOf(measure, [input.clientHost, ...input.sinkHosts]);
  const logBytesPerRow = input.bytesUnknown === undefined ? (input.logBytesPerRow ?? null) : null;

  return {
    rowsPerSecond,
    ...(share < 1 ? { storedRowsPerSecond } : {}),
    mibPerSecond: input.bytesUnknown === undefined ? (rowsPerSecond * input.bytesPerRow) / MiB : null,
    windowRowsPerSecond: {
      median: median(windowRates),
      min: Math.min(...windowRates),
      max: Math.max(...windowRates),
    },
    bytesPerRow: input.bytesUnknown === undefined ? input.bytesPerRow : null,
    // write-up 004's unit: the log lines' own bytes, beside the wire bytes above
    logBytesPerRow,
    logMibPerSecond: logMibPerSec(rowsPerSecond, logBytesPerRow),
    ...(input.bytesUnknown === undefined ? {} : { bytesUnknown: input.bytesUnknown }),
    measuredSeconds,
    ...sinkFigures(
      windows[sinkName] ?? [],
      input.limits[sinkName],
      measuredSeconds,
      end.stored - start.stored,
    ),
    lagP50Ms: lags.length ? quantile(lags, 0.5) : null,
    lagP99Ms: lags.length ? quantile(lags, 0.99) : null,
    lagMaxMs: lags.length ? Math.max(...lags) : null,
    lagSamples: lags.length,
    backlogLagMaxMs: backlogs.length ? Math.max(...backlogs) : null,
    countQueryMaxMs: Math.max(0, ...series.map((p) => p.countQueryMs)),
    drainSeconds: (drained.t - end.t) / 1000,
    bottleneck: findBottleneck(
      windows,
      input.limits,
      input.sinkHosts,
      input.clientHost,
      input.machineCores,
      input.offeredPerSec
        ? { offeredPerSec: input.offeredPerSec, sentPerSec: (end.sent - start.sent) / measuredSeconds }
        : undefined,
    ),
    ...(contention ? { contention } : {}),
  };
}
