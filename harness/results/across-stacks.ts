/**
 * The comparison across stacks (hardware sizes), `compareStacks`: per stack and cell, the runs of the stack's
 * latest `bench` invocation; median rows/s and MiB/s with their spread (IQR, coefficient of variation, "erratic"
 * above a threshold); the ratio of medians to the first stack with a percentile bootstrap interval (Efron &
 * Tibshirani 1993, see harness/stats/bootstrap.ts) over the runs' rows/s; rows/s per vCPU and per GiB of the sink's
 * caps; CPU use and cost per row, throttling, network, ingest lag, the bottleneck and the ledger. The honesty rules
 * of harness/stats/compare.ts apply (fewer than 3 measured runs on a side is "inconclusive (n=…)"; a stored A/A
 * noise floor, harness/results/noise-floor.ts, must be exceeded). Only eligible runs count (status ok, caps
 * enforced, the stack's machine: harness/results/eligibility.ts); the others are listed per row in `excluded`.
 */
import { ConfigurationError } from "../../core/errors.ts";
import {
  compareSamples,
  describeSample,
  type SampleComparison,
  type SampleDescription,
} from "../stats/compare.ts";
import {
  capsFlags,
  cellSort,
  finite,
  ledgerTotals,
  med,
  perCore,
  perGiB,
  rowsPerSecondOf,
  sinkCaps,
  type LedgerTotals,
  type SinkCaps,
} from "./caps.ts";
import { bottleneckLabel, type MachineFields } from "./format.ts";
import {
  diffFingerprints,
  groupFingerprint,
  refuseVersionMismatch,
  stackDifferences,
  type Fingerprint,
} from "./fingerprint.ts";
import { chooseInvocation, eligibleRuns, type ExcludedRun } from "./eligibility.ts";
import { floorsOf } from "./noise-floor.ts";
import type { ComparisonOptions } from "./options.ts";
import { loadRuns, noResultsError } from "./store.ts";
import type { RunRecord } from "./types.ts";

/** One stack's figures in one cell (rows of `compareStacks`); the ledger figures (LedgerTotals) are over the runs that have a ledger, null when none has. */
export interface StackRow extends LedgerTotals {
  stack: string;
  /** the first stack, which ratios refer to */
  baselineStack: string;
  /** with a single stack and several cells: the first cell, which ratios refer to instead (how the swept parameter moves throughput) */
  baselineCell?: string;
  /** matrix cell id ("default" without a matrix) */
  cell: string;
  runs: RunRecord[];
  /**
   * the runs the figures rest on: status ok with a summary, caps enforced, the stack's machine
   * (harness/results/eligibility.ts); the others are in `excluded`
   */
  measured: RunRecord[];
  /** runs of this stack and cell left out, with reasons */
  excluded: ExcludedRun[];
  medianRowsPerSecond: number;
  /** median wire MiB/s (Summary.mibPerSecond: encoded bytes sent) */
  medianMiBPerSecond: number;
  /** median log MiB/s (Summary.logMibPerSecond: the log lines' own bytes); NaN when no run knows it */
  medianLogMiBPerSecond: number;
  /** median rows/s of this stack / of the first stack (same cell) */
  ratio: number;
  /** spread of the measured runs' rows/s (n, median, IQR, min, max, CV, erratic) */
  rowsPerSecond: SampleDescription;
  /** ratio to the first stack with its bootstrap interval and verdict; null for the first stack itself */
  comparison: SampleComparison | null;
  /** the sink's caps (from the latest measured run) */
  caps: SinkCaps;
  /** median over runs of rows/s ÷ sink cores, and ÷ sink GiB of memory; null when uncapped */
  rowsPerSecondPerCore: number | null;
  rowsPerSecondPerGiB: number | null;
  sinkCores: number;
  cpuMsPer1000Rows: number;
  /** median over runs of the sink's bytes on disk per million stored rows (run.json storage); null when none says */
  storageBytesPerMillionRows: number | null;
  throttledShare: number | null;
  /**
   * median over the measured runs of what the rows cost the whole stack (Summary.cost): dollars per million rows
   * when every measured run has them, else null; core-seconds per million rows, null when no run says
   */
  cost: {
    usdPerMillionRows: number | null;
    coreSecondsPerMillionRows: number | null;
    /** why a run has no dollars (Summary.cost.noPrice: the hosts without a price), absent when every run has them */
    noPrice?: string;
  };
  networkMbitPerSecond: number;
  lagP99Ms: number | null;
  /** the lag samples each measured run's p99 rests on (Summary.lagSamples; undefined for older results) */
  lagSamples: (number | undefined)[];
  /** the runs' bottleneck verdicts as shown (format.ts bottleneckLabel: "host contention", "uncertain (network 0.84 / …)") */
  bottlenecks: string[];
  /** caps and contention flags of the runs (runFlags): "oversubscribed", "partial", "uncapped (≥ machine)", "contended 2/3" */
  flags: string[];
  /** environment fingerprint of the stack's runs (all its cells) */
  fingerprint: Fingerprint;
}

/**
 * The runs of the latest invocation that completed a measurement (eligibility.ts chooseInvocation, whose
 * `passedOver` lists the newer incomplete ones). Empty when `all` is empty. Used for one stack's query table
 * (harness/results/compare.ts).
 */
export function latestInvocationRuns(all: RunRecord[]): RunRecord[] {
  return chooseInvocation(all).runs;
}

/** The machine of a row's figures: its measured runs' (all its stack's runs when none was measured). */
export function rowMachine(r: StackRow): MachineFields {
  return r.measured.length ? groupFingerprint(r.measured) : r.fingerprint;
}

/**
 * Per stack and cell, the runs of the stack's latest invocation: medians, spread, ratio to the first stack's same
 * cell with a bootstrap interval over the runs' rows/s (`compareSamples`, default 90 %, seed 1: deterministic),
 * per-vCPU and per-GiB figures and the environment fingerprint. Rows are ordered by cell (natural order), then
 * by stack as given. Limits differ between stacks by design and are not part of the fingerprint here.
 * @throws ConfigurationError E_NO_RESULTS when a stack has no runs of the scenario; E_VERSION_MISMATCH when the
 *         stacks' component versions differ and `force` is not set
 */
export async function compareStacks(
  resultsRoot: string,
  scenario: string,
  stacks: string[],
  options: ComparisonOptions = {},
): Promise<StackRow[]> {
  const perStack: Array<{
    stack: string;
    runs: RunRecord[];
    used: Set<string>;
    excludedBy: (cell: string) => ExcludedRun[];
  }> = [];
  for (const stack of stacks) {
    const all = await loadRuns(resultsRoot, stack, scenario);
    if (all.length === 0) {
      throw await noResultsError(resultsRoot, stack, scenario);
    }
    const { runs, passedOver } = chooseInvocation(all);
    const e = eligibleRuns(runs);
    // a left-out run of a cell this stack has no row for (a newer, incomplete invocation's) goes with its first row
    const ownCells = new Set(runs.map((r) => r.cell));
    const firstCell = [...ownCells].sort(cellSort)[0];
    const excluded = [...e.excluded, ...passedOver];
    const excludedBy = (cell: string): ExcludedRun[] =>
      excluded.filter((x) => x.cell === cell || (cell === firstCell && !ownCells.has(x.cell)));
    perStack.push({ stack, runs, used: new Set(e.used.map((r) => r.runId)), excludedBy });
  }
  const fingerprints = new Map(perStack.map((s) => [s.stack, groupFingerprint(s.runs)]));
  refuseVersionMismatch(
    diffFingerprints(perStack.map((s) => ({ label: s.stack, fingerprint: fingerprints.get(s.stack)! }))),
    options.force,
    `stacks ${stacks.join(", ")}`,
  );

  const cells = [...new Set(perStack.flatMap((s) => s.runs.map((r) => r.cell)))].sort(cellSort);
  const floors = new Map(
    perStack.map((s) => [s.stack, floorsOf(resultsRoot, s.stack, scenario, options.noiseFloors)]),
  );
  // across stacks the noise of both sides counts: the larger of the two stacks' A/A floors for the cell
  const floorFor = (stack: string, cell: string): number | null => {
    const xs = [floors.get(perStack[0]!.stack)!.get(cell), floors.get(stack)!.get(cell)].filter(finite);
    return xs.length ? Math.max(...xs) : null;
  };
  const rows: StackRow[] = [];
  for (const cell of cells) {
    let baseline: RunRecord[] | null = null;
    for (const { stack, runs: stackRuns, used, excludedBy } of perStack) {
      const runs = stackRuns.filter((r) => r.cell === cell);
      if (runs.length === 0) continue;
      const measured = runs.filter((r) => used.has(r.runId));
      const isFirst = stack === perStack[0]!.stack;
      if (isFirst) baseline = measured;
      const values = rowsPerSecondOf(measured);
      const lastMeasured = measured[measured.length - 1] ?? runs[runs.length - 1]!;
      rows.push({
        stack,
        baselineStack: perStack[0]!.stack,
        cell,
        runs,
        measured,
        excluded: excludedBy(cell),
        medianRowsPerSecond: med(measured, (r) => r.summary?.rowsPerSecond),
        medianMiBPerSecond: med(measured, (r) => r.summary?.mibPerSecond),
        medianLogMiBPerSecond: med(measured, (r) => r.summary?.logMibPerSecond),
        ratio: Number.NaN,
        rowsPerSecond: describeSample(values, { erraticCv: options.erraticCv }),
        comparison:
          isFirst || baseline === null || measured.length === 0 || baseline.length === 0
            ? null
            : compareSamples(rowsPerSecondOf(baseline), values, {
                ...options,
                noiseFloor: floorFor(stack, cell),
              }),
        caps: sinkCaps(lastMeasured),
        rowsPerSecondPerCore: perCore(measured),
        rowsPerSecondPerGiB: perGiB(measured),
        sinkCores: med(measured, (r) => r.summary?.sinkCores),
        cpuMsPer1000Rows: med(measured, (r) => r.summary?.cpuMsPer1000Rows),
        storageBytesPerMillionRows: measured.some((r) => bytesPerMillion(r) !== null)
          ? med(measured, (r) => bytesPerMillion(r) ?? undefined)
          : null,
        throttledShare: measured.some((r) => r.summary?.throttledShare != null)
          ? med(measured, (r) => r.summary?.throttledShare)
          : null,
        cost: costOf(measured),
        networkMbitPerSecond: med(measured, (r) => r.summary?.sinkNetworkMbitPerSecond),
        lagP99Ms: measured.some((r) => r.summary?.lagP99Ms != null)
          ? med(measured, (r) => r.summary?.lagP99Ms)
          : null,
        lagSamples: measured.filter((r) => r.summary?.lagP99Ms != null).map((r) => r.summary?.lagSamples),
        bottlenecks: [...new Set(measured.map((r) => bottleneckLabel(r.summary!.bottleneck)))],
        flags: runFlags(runs),
        ...ledgerTotals(runs),
        fingerprint: fingerprints.get(stack)!,
      });
    }
    const base =
      rows.find((r) => r.cell === cell && r.stack === perStack[0]!.stack)?.medianRowsPerSecond ?? Number.NaN;
    for (const r of rows) if (r.cell === cell) r.ratio = r.medianRowsPerSecond / base;
  }
  if (perStack.length === 1 && cells.length > 1) sweepRatios(rows, options);
  return rows;
}

/**
 * One stack, several cells: ratios and comparisons against the first cell, so that the table reads as "how the swept
 * parameter moves throughput" (with the same bootstrap interval and rules as between stacks; no A/A floor applies,
 * the cells differ on purpose).
 */
function sweepRatios(rows: StackRow[], options: ComparisonOptions): void {
  const first = rows[0]!;
  for (const r of rows) {
    r.baselineCell = first.cell;
    r.ratio = r.medianRowsPerSecond / first.medianRowsPerSecond;
    r.comparison =
      r === first
        ? null
        : compareSamples(rowsPerSecondOf(first.measured), rowsPerSecondOf(r.measured), options);
  }
}

/** JSON-ready form of stack rows (run records replaced by their ids; NaN becomes null when stringified). */
export function stackComparisonJson(scenario: string, rows: StackRow[]): object {
  return {
    mode: "stacks",
    scenario,
    baseline: rows[0]?.stack ?? null,
    rows: rows.map(({ runs, measured, ...rest }) => ({
      ...rest,
      runIds: runs.map((r) => r.runId),
      measuredRunIds: measured.map((r) => r.runId),
    })),
    differences: stackDifferences(rows),
    // every left-out run in one list, as the other comparisons' --json has it (each row keeps its own too)
    excluded: rows.flatMap((r) => r.excluded),
  };
}

/**
 * The caps and contention flags of a stack's runs, shown in compare's table and the report (columns.ts "flags"):
 * every caps flag any run carries (caps.ts capsFlags) and "contended k/n" when k of the n measured runs were
 * contended (run.json `summary.contention.contended`).
 */
export function runFlags(runs: readonly RunRecord[]): string[] {
  const flags = [...new Set(runs.flatMap((r) => capsFlags(r)))];
  const measured = runs.filter((r) => r.summary);
  const contended = measured.filter((r) => r.summary!.contention?.contended).length;
  if (contended > 0) flags.push(`contended ${contended}/${measured.length}`);
  return flags;
}

/** A run's storage per million rows (run.json storage, harness/runner/storage.ts), or null when it has none. */
/** StackRow.cost: medians of the runs' Summary.cost; dollars only when every run has them. */
function costOf(measured: RunRecord[]): StackRow["cost"] {
  const usd = measured.map((r) => r.summary?.cost?.usdPerMillionRows);
  const core = measured.map((r) => r.summary?.cost?.coreSecondsPerMillionRows);
  return {
    usdPerMillionRows:
      measured.length > 0 && usd.every((u) => u !== undefined)
        ? med(measured, (r) => r.summary?.cost?.usdPerMillionRows)
        : null,
    coreSecondsPerMillionRows: core.some((c) => c != null)
      ? med(measured, (r) => r.summary?.cost?.coreSecondsPerMillionRows ?? undefined)
      : null,
    ...noPriceOf(measured),
  };
}

/** The first measured run's reason for having no dollars, when a run has none. */
function noPriceOf(measured: RunRecord[]): { noPrice?: string } {
  const why = measured.find((r) => r.summary?.cost?.usdPerMillionRows === undefined)?.summary?.cost?.noPrice;
  return why ? { noPrice: why } : {};
}

function bytesPerMillion(r: RunRecord): number | null {
  const s = r.storage;
  return s && "bytesPerMillionRows" in s ? s.bytesPerMillionRows : null;
}
