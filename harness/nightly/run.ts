/**
 * `ingestbench nightly PLAN`: run every (stack, scenario) entry of a plan as `ingestbench bench` does, then per
 * (stack, scenario) and cell test tonight against a baseline of the previous K good nights in the same environment
 * (harness/nightly/window.ts: the method, the floor, the drift test), with Holm's correction over every cell tested
 * tonight (harness/stats/multiple.ts). Each cell also carries its storage per million rows against the same
 * baseline nights, shown, and reported when it changes, never failing (harness/nightly/storage.ts). Runs that are not ok, whose caps were not enforced, or of another environment
 * are left out and listed with their reasons (harness/results/eligibility.ts). The command (./command.ts) runs the
 * plan and hands the decision to ui/nightly.ts, which prints it. With `requireHistory` a pair with no
 * earlier night is a failure (exit 2, E_NIGHTLY_HISTORY): the job lost its history; the first night bootstraps by
 * running without it.
 */
import { IngestbenchError } from "../../core/errors.ts";
import type { ExcludedRun } from "../results/eligibility.ts";
import { diffFingerprints, groupFingerprint, describeDifference } from "../results/fingerprint.ts";
import { floorsOf } from "../results/noise-floor.ts";
import { loadRuns } from "../results/store.ts";
import {
  DEFAULT_ALPHA,
  DEFAULT_WINDOW,
  nightsOf,
  settle,
  settleDrift,
  testLatestNight,
  type CellTest,
  type Night,
} from "./window.ts";
import { nightlyStorage, type NightlyStorage } from "./storage.ts";

/** One (stack, scenario) pair to decide on. */
export interface NightlyPair {
  stack: string;
  scenario: string;
}

/** One cell's verdict tonight (the fields of window.ts CellTest, and where it belongs). */
export interface NightlyCell extends CellTest {
  stack: string;
  scenario: string;
  /** the baseline's median rows/s (the same as baselineRowsPerSecond; the name nightly.json has always used) */
  previousRowsPerSecond: number;
  /** bytes on the sink's disk per million rows tonight against the same baseline nights (./storage.ts); null: none recorded */
  storage: NightlyStorage | null;
}

export interface NightlyPairResult extends NightlyPair {
  /**
   * compared: tested against a baseline; no-previous: no earlier night (the first night, bootstrapping);
   * no-history: no earlier night while history was required (a failure); environment-changed: earlier nights exist
   * but none in tonight's environment, no verdict; error: the pair could not be read
   */
  status: "compared" | "no-previous" | "no-history" | "environment-changed" | "error";
  latest: string | null;
  /** the most recent baseline night (null without one) */
  previous: string | null;
  /** every earlier night stored for the pair */
  nights: number;
  message: string | null;
  /** the error code when the pair failed: E_NIGHTLY_HISTORY (history required, none stored); null otherwise */
  code: string | null;
  /** environment, version and limit differences between the most recent earlier night and tonight ("field: previous x; latest y") */
  differences: string[];
  /** runs left out tonight and in the baseline nights, with their reasons */
  excluded: ExcludedRun[];
  cells: NightlyCell[];
}

export interface NightlyDecision {
  /** the baseline size K and the significance level used */
  window: number;
  alpha: number;
  pairs: NightlyPairResult[];
  /** cells significantly slower than their baseline */
  regressions: NightlyCell[];
  /** cells compared without a verdict (fewer than 3 measured runs a side in the runs test) */
  inconclusive: NightlyCell[];
  /** cells whose value drifts over the window (reported, never failing) */
  drifts: NightlyCell[];
  /** cells whose storage per million rows left their baseline nights' range by at least 5 % (./storage.ts; reported, never failing) */
  storageChanges: NightlyCell[];
  /** 1 on a regression, 2 when a pair could not be read or history was required and missing, else 0 */
  exitCode: number;
}

export interface DecideOptions {
  /** use baseline nights of any environment (the differences are listed) */
  force?: boolean;
  window?: number;
  requireHistory?: boolean;
  alpha?: number;
  minChange?: number;
}

/** "stack/scenario/cell": a cell's name in the decision's lists and events. */
export const cellName = (c: NightlyCell): string => `${c.stack}/${c.scenario}/${c.cell}`;

/** "field: previous x; latest y" between the most recent earlier night with eligible runs and tonight. */
function nightDifferences(previous: Pick<Night, "used"> | undefined, latest: Pick<Night, "used">): string[] {
  if (!previous || previous.used.length === 0 || latest.used.length === 0) return [];
  return diffFingerprints([
    { label: "previous", fingerprint: groupFingerprint(previous.used, { limits: true }) },
    { label: "latest", fingerprint: groupFingerprint(latest.used, { limits: true }) },
  ]).map(describeDifference);
}

/**
 * Decide tonight for every pair: nights from results/<stack>/<scenario>/, tonight's cells against their window
 * baselines (harness/nightly/window.ts), Holm over every tested cell of every pair, drift per cell.
 */
export async function decideNightly(
  resultsRoot: string,
  pairs: NightlyPair[],
  options: DecideOptions = {},
): Promise<NightlyDecision> {
  const window = options.window ?? DEFAULT_WINDOW;
  const alpha = options.alpha ?? DEFAULT_ALPHA;
  const out: NightlyPairResult[] = [];
  for (const { stack, scenario } of pairs) {
    const nights = nightsOf(await loadRuns(resultsRoot, stack, scenario));
    const tonight = nights[nights.length - 1];
    const base = {
      stack,
      scenario,
      latest: tonight?.invocation ?? null,
      previous: null,
      nights: Math.max(0, nights.length - 1),
      differences: [],
      excluded: tonight?.excluded ?? [],
      cells: [],
      code: null,
    };
    if (!tonight || nights.length === 1) {
      const message = !tonight
        ? "no results"
        : options.requireHistory
          ? "no previous night stored, but history was required (--require-history): the results of earlier nights were not restored; bootstrap a new history explicitly by running without --require-history"
          : "no previous night to compare with (this night is the baseline for the next)";
      out.push({
        ...base,
        status: options.requireHistory ? "no-history" : "no-previous",
        message,
        code: options.requireHistory ? "E_NIGHTLY_HISTORY" : null,
      });
      continue;
    }
    let cells: NightlyCell[];
    try {
      const tests = testLatestNight(nights, {
        window,
        force: options.force,
        alpha,
        minChange: options.minChange,
        aaFloors: floorsOf(resultsRoot, stack, scenario, true),
      });
      cells = tests.map((t) => ({
        ...t,
        stack,
        scenario,
        previousRowsPerSecond: t.baselineRowsPerSecond,
        storage: nightlyStorage(nights, t, options.minChange),
      }));
    } catch (err) {
      if (!(err instanceof IngestbenchError)) throw err;
      out.push({ ...base, status: "error", message: err.message, code: err.code });
      continue;
    }
    const baselineInvocations = new Set(cells.flatMap((c) => c.baselineNights.map((n) => n.invocation)));
    const previous = [...baselineInvocations].sort().at(-1) ?? null;
    const earlier = nights
      .slice(0, -1)
      .filter((n) => n.used.length > 0)
      .at(-1);
    const envChanged =
      cells.length > 0 &&
      cells.every((c) => c.environmentChanged || c.method === null) &&
      cells.some((c) => c.environmentChanged);
    out.push({
      ...base,
      previous,
      status: envChanged ? "environment-changed" : "compared",
      message: envChanged
        ? `environment changed, no verdict: tonight ran on ${tonight.environment}; the last earlier night on ${earlier?.environment ?? "–"}`
        : null,
      differences: nightDifferences(nights.find((n) => n.invocation === previous) ?? earlier, tonight),
      excluded: [
        ...tonight.excluded,
        ...nights.filter((n) => baselineInvocations.has(n.invocation)).flatMap((n) => n.excluded),
      ],
      cells,
    });
  }
  const all = out.flatMap((p) => p.cells);
  settle(all, alpha, options.minChange);
  settleDrift(all, alpha);
  const regressions = all.filter((c) => c.significant && c.change === "slower");
  const inconclusive = all.filter((c) => c.inconclusive);
  const drifts = all.filter((c) => c.drift?.detected);
  const storageChanges = all.filter((c) => c.storage?.change === "larger" || c.storage?.change === "smaller");
  const exitCode =
    regressions.length > 0 ? 1 : out.some((p) => p.status === "error" || p.status === "no-history") ? 2 : 0;
  return { window, alpha, pairs: out, regressions, inconclusive, drifts, storageChanges, exitCode };
}
