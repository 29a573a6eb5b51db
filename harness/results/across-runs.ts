/**
 * The comparison across runs on one stack, `compareRuns`: a baseline selection of runs against one or more
 * contender selections, per cell, under the honesty rules of harness/stats/compare.ts (fewer than 3 measured runs on
 * a side is "inconclusive (n=…)"; a stored A/A noise floor, harness/results/noise-floor.ts, must be exceeded).
 * Fingerprints include the applied limits; mismatched component versions are refused unless forced. Only eligible
 * runs count (status ok, caps enforced, the selection's machine: harness/results/eligibility.ts); the others are
 * listed in `excluded` with their reasons.
 */
import { ConfigurationError } from "../../core/errors.ts";
import {
  compareSamples,
  describeSample,
  type SampleComparison,
  type SampleDescription,
} from "../stats/compare.ts";
import {
  cellSort,
  ledgerTotals,
  med,
  perCore,
  perGiB,
  rowsPerSecondOf,
  sinkCaps,
  type LedgerTotals,
  type SinkCaps,
} from "./caps.ts";
import {
  diffFingerprints,
  groupFingerprint,
  refuseVersionMismatch,
  type Fingerprint,
  type FingerprintDifference,
} from "./fingerprint.ts";
import type { MachineFields } from "./format.ts";
import { chooseInvocation, completedMeasurement, eligibleRuns, type ExcludedRun } from "./eligibility.ts";
import { floorsOf } from "./noise-floor.ts";
import type { ComparisonOptions } from "./options.ts";
import { loadRuns, noResultsError } from "./store.ts";
import type { RunRecord } from "./types.ts";

/** What to compare: selectors of runs on one stack. */
export interface RunsSelection {
  /** run id prefix, invocation prefix, "latest" or "previous" (the invocation before the latest) */
  baseline: string;
  /** one or more selections as for baseline; default ["latest"] */
  contenders?: string[];
}

/** A selection of runs on one stack. */
export interface RunGroup {
  /** the selector as given */
  label: string;
  invocations: string[];
  runIds: string[];
  statuses: Record<string, number>;
  caps: SinkCaps;
  fingerprint: Fingerprint;
  /** the machine of the runs the figures rest on (all of the selection's when none is eligible): format.ts machineText */
  machine: MachineFields;
  /** runs of the selection left out of the figures, with reasons (harness/results/eligibility.ts) */
  excluded: ExcludedRun[];
}

/** One group's figures in one cell (rows/s; per vCPU and per GiB of the sink caps, null when uncapped); the ledger figures (LedgerTotals) are over the runs that have a ledger, null when none has. */
export interface CellSide extends LedgerTotals {
  label: string;
  runs: number;
  /** runs the figures rest on (eligible: harness/results/eligibility.ts) */
  measured: number;
  rowsPerSecond: SampleDescription;
  /** median wire MiB/s (Summary.mibPerSecond) */
  medianMiBPerSecond: number;
  /** median log MiB/s (Summary.logMibPerSecond); NaN when no run knows it */
  medianLogMiBPerSecond: number;
  rowsPerSecondPerCore: number | null;
  rowsPerSecondPerGiB: number | null;
}

/** One cell: the baseline's figures and each contender's, compared with the baseline. */
export interface CellComparison {
  cell: string;
  baseline: CellSide;
  /** per contender: its figures and the comparison with the baseline (null when a side has no measured run) */
  contenders: Array<CellSide & { comparison: SampleComparison | null; reason: string | null }>;
}

/** The result of `compareRuns` (what `ingestbench compare --json` prints in this mode). */
export interface RunsComparison {
  mode: "runs";
  scenario: string;
  stack: string;
  baseline: RunGroup;
  contenders: RunGroup[];
  cells: CellComparison[];
  /** environment, version and limit differences between the groups */
  differences: FingerprintDifference[];
  /** true when versions differ and the comparison went ahead because of `force` */
  forced: boolean;
  /** significant changes over all cells and contenders */
  significant: { faster: number; slower: number };
  /** comparisons without a verdict: fewer than 3 measured runs on a side */
  inconclusive: number;
  /** the A/A noise floors applied, per cell (fraction); empty when no A/A result is stored */
  noiseFloors: Record<string, number>;
  /** every run left out (not ok, caps not enforced, another machine than the rest of its selection), with reasons */
  excluded: ExcludedRun[];
}

/**
 * Runs matching a selector: "latest"/"previous" are the latest complete invocation and the one before it
 * (eligibility.ts chooseInvocation: an interrupted or unmeasured newer invocation is passed over, and "latest" lists
 * its runs in `passedOver`); anything else selects the runs whose run id or invocation starts with it.
 */
function selectRuns(all: RunRecord[], selector: string): { runs: RunRecord[]; passedOver: ExcludedRun[] } {
  if (selector === "latest" || selector === "previous") {
    const chosen = chooseInvocation(all, selector === "latest" ? 0 : 1);
    return { runs: chosen.runs, passedOver: selector === "latest" ? chosen.passedOver : [] };
  }
  return {
    runs: all.filter((r) => r.runId.startsWith(selector) || r.invocation.startsWith(selector)),
    passedOver: [],
  };
}

/**
 * One selection's figures in one cell; the ledger counts every run, the rest only the runs the comparison uses
 * (`used`: eligible, harness/results/eligibility.ts).
 */
function cellSide(
  label: string,
  runs: RunRecord[],
  used: ReadonlySet<string>,
  erraticCv: number | undefined,
): CellSide {
  const measured = runs.filter((r) => used.has(r.runId));
  return {
    label,
    runs: runs.length,
    measured: measured.length,
    rowsPerSecond: describeSample(rowsPerSecondOf(measured), { erraticCv }),
    medianMiBPerSecond: med(measured, (r) => r.summary?.mibPerSecond),
    medianLogMiBPerSecond: med(measured, (r) => r.summary?.logMibPerSecond),
    rowsPerSecondPerCore: perCore(measured),
    rowsPerSecondPerGiB: perGiB(measured),
    ...ledgerTotals(runs),
  };
}

/**
 * Compare runs on one stack: a baseline selection against contender selections (each a run id prefix, an
 * invocation prefix, "latest" or "previous"), per cell: medians, spread, ratio contender / baseline with a
 * bootstrap interval and verdict (`compareSamples`), per-vCPU and per-GiB figures. Fingerprints include the
 * applied limits; all differences are listed.
 * @throws ConfigurationError E_NO_RESULTS (nothing stored for the scenario on the stack), E_NO_RUNS (a selector
 *         matches no run; the message lists recent invocations), E_SELECTOR_OVERLAP (a run is in two selections),
 *         E_VERSION_MISMATCH (component versions differ and `force` is not set)
 */
export async function compareRuns(
  resultsRoot: string,
  scenario: string,
  stack: string,
  selection: RunsSelection,
  options: ComparisonOptions = {},
): Promise<RunsComparison> {
  const all = await loadRuns(resultsRoot, stack, scenario);
  if (all.length === 0) {
    throw await noResultsError(resultsRoot, stack, scenario, "");
  }
  const selectors = [
    selection.baseline,
    ...(selection.contenders?.length ? selection.contenders : ["latest"]),
  ];
  const picked = selectors.map((sel) => {
    const { runs, passedOver } = selectRuns(all, sel);
    if (runs.length === 0 && (sel === "latest" || sel === "previous")) {
      const complete = [...new Set(all.filter(completedMeasurement).map((r) => r.invocation))];
      throw new ConfigurationError(
        "E_NO_RUNS",
        `"${sel}" of "${scenario}" on "${stack}": latest and previous count complete invocations only (a run with a summary, not interrupted), and there ${complete.length === 1 ? "is 1" : `are ${complete.length}`}${complete.length ? ` (${complete.slice(-5).join(", ")})` : ""}; name an invocation or run id prefix instead`,
      );
    }
    if (runs.length === 0) {
      const recent = [...new Set(all.map((r) => r.invocation))].sort().slice(-5);
      throw new ConfigurationError(
        "E_NO_RUNS",
        `no run of "${scenario}" on "${stack}" matches "${sel}" (a run id prefix, an invocation prefix, latest or previous); recent invocations: ${recent.join(", ")}`,
      );
    }
    return { label: sel, runs, passedOver };
  });
  const owner = new Map<string, string>();
  for (const p of picked) {
    for (const r of p.runs) {
      const other = owner.get(r.runId);
      if (other !== undefined)
        throw new ConfigurationError(
          "E_SELECTOR_OVERLAP",
          `run ${r.runId} is selected by both "${other}" and "${p.label}": a run cannot be compared with itself`,
        );
      owner.set(r.runId, p.label);
    }
  }
  const eligible = picked.map((p) => eligibleRuns(p.runs));
  const used = new Set(eligible.flatMap((e) => e.used.map((r) => r.runId)));
  const groups: RunGroup[] = picked.map((p, i) => {
    const statuses: Record<string, number> = {};
    for (const r of p.runs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const measured = eligible[i]!.used;
    return {
      label: p.label,
      invocations: [...new Set(p.runs.map((r) => r.invocation))].sort(),
      runIds: p.runs.map((r) => r.runId),
      statuses,
      caps: sinkCaps(measured[measured.length - 1] ?? p.runs[p.runs.length - 1]!),
      fingerprint: groupFingerprint(p.runs, { limits: true }),
      machine: groupFingerprint(measured.length ? measured : p.runs),
      excluded: [...eligible[i]!.excluded, ...p.passedOver],
    };
  });
  const differences = diffFingerprints(groups.map((g) => ({ label: g.label, fingerprint: g.fingerprint })));
  refuseVersionMismatch(
    differences,
    options.force,
    `runs ${selectors.join(" vs ")} of "${scenario}" on "${stack}"`,
  );

  const cells = [...new Set(picked.flatMap((p) => p.runs.map((r) => r.cell)))].sort(cellSort);
  const floors = floorsOf(resultsRoot, stack, scenario, options.noiseFloors);
  const significant = { faster: 0, slower: 0 };
  let inconclusive = 0;
  const out: CellComparison[] = cells.map((cell) => {
    const base = picked[0]!.runs.filter((r) => r.cell === cell);
    const baseSide = cellSide(picked[0]!.label, base, used, options.erraticCv);
    const baseValues = rowsPerSecondOf(base.filter((r) => used.has(r.runId)));
    return {
      cell,
      baseline: baseSide,
      contenders: picked.slice(1).map((p) => {
        const runs = p.runs.filter((r) => r.cell === cell);
        const side = cellSide(p.label, runs, used, options.erraticCv);
        const values = rowsPerSecondOf(runs.filter((r) => used.has(r.runId)));
        if (baseValues.length === 0 || values.length === 0) {
          const missing = baseValues.length === 0 ? `the baseline "${picked[0]!.label}"` : `"${p.label}"`;
          return {
            ...side,
            comparison: null,
            reason: `no measured run of cell ${cell} in ${missing} (left-out runs are listed as excluded)`,
          };
        }
        const comparison = compareSamples(baseValues, values, {
          ...options,
          noiseFloor: floors.get(cell) ?? null,
        });
        if (comparison.significant) significant[comparison.change === "faster" ? "faster" : "slower"]++;
        if (comparison.inconclusive) inconclusive++;
        return { ...side, comparison, reason: comparison.reason };
      }),
    };
  });
  return {
    mode: "runs",
    scenario,
    stack,
    baseline: groups[0]!,
    contenders: groups.slice(1),
    cells: out,
    differences,
    forced: differences.some((d) => d.kind === "version"),
    significant,
    inconclusive,
    noiseFloors: Object.fromEntries(floors),
    excluded: groups.flatMap((g) => g.excluded),
  };
}
