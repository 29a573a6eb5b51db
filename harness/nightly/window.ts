/**
 * The nightly baseline from a window of nights, per (stack, scenario) and cell.
 *
 * A *night* is one invocation of `ingestbench nightly` (or `bench`) stored under results/<stack>/<scenario>/. Only
 * eligible runs count (status ok, caps enforced, not oversubscribed: harness/results/eligibility.ts); a night's
 * *environment* is the `environmentKey` of its eligible runs (CPU model, kernel, machine cores, cgroup version,
 * component versions; runs of another environment within a night are excluded, the majority wins). A night's value
 * in a cell is the median rows/s of its eligible runs there.
 *
 * The *baseline* of a night N in a cell is the previous K good nights (K = `window`, default 7): nights before N, in
 * N's environment (unless `force`), with an eligible run in the cell, whose own verdict in the cell was not a
 * regression — verdicts are replayed from the first stored night on, so a regression night never enters a later
 * baseline, and a night that equals the good ones is compared with them, never with the regression before it. No
 * earlier night in N's environment while earlier nights exist is "environment changed, no verdict".
 *
 * The test, by the size k of the baseline:
 * - k ≥ 3 ("window"): between-night noise is measured. With m_1…m_k the baseline nights' values and x tonight's,
 *   ln x is tested as one new draw from the baseline's distribution of ln m: t = (ln x − mean)/(s·√(1 + 1/k)) with
 *   s the sample standard deviation of ln m, one-sided p-values from Student's t with k − 1 degrees of freedom (the
 *   prediction interval for one future observation of a normal sample: G. J. Hahn & W. Q. Meeker 1991, "Statistical
 *   Intervals", ch. 4). The ratio shown is x / median(m); its
 *   interval is ratio·e^(∓t_{0.95,k−1}·s·√(1 + 1/k)), the 90 % band of a single good night.
 *   The noise floor is an A/A floor across nights, measured the way it is applied: each baseline night against the
 *   median of the other baseline nights, floor = max_j |m_j / median(m_{−j}) − 1| — the largest change a good night
 *   has shown against a baseline of good nights. A stored back-to-back A/A floor (`ingestbench aa`,
 *   harness/results/noise-floor.ts) applies too when it is larger.
 * - k = 1 or 2 ("runs"): between-night noise is not measured yet. The runs of the baseline nights, pooled, are
 *   compared with tonight's runs: ratio of medians with its bootstrap interval (harness/stats/compare.ts, at least 3
 *   runs a side or "inconclusive"), and the exact one-sided rank-sum test (harness/stats/rank.ts) for the p-value.
 *   The only floor is the stored back-to-back A/A floor, which is then a lower bound of the noise between nights.
 * A cell is a regression when its one-sided p-value for "slower", Holm-adjusted over every cell tested that night
 * (harness/stats/multiple.ts explains the choice), is ≤ α (0.05), and the slowdown 1 − ratio is at least
 * `minChange` (5 %) and above the floor. "faster" is decided the same way and never fails the night.
 *
 * Drift: over the baseline nights and tonight (at least 5 points), the Mann–Kendall test and Theil–Sen slope of
 * ln(night value) against days (harness/stats/trend.ts); reported when the Holm-adjusted p-value (over the cells) is
 * ≤ α and the slope's 90 % interval excludes 0. Drift is reported; it does not fail the night.
 */
import { median, quantile } from "../stats/descriptive.ts";
import { compareSamples, DEFAULT_MIN_CHANGE } from "../stats/compare.ts";
import { studentTCdf, studentTQuantile } from "../stats/distributions.ts";
import { holmAdjust } from "../stats/multiple.ts";
import { rankSumTest } from "../stats/rank.ts";
import { trendOf } from "../stats/trend.ts";
import { cellSort, rowsPerSecondOf } from "../results/caps.ts";
import { eligibleRuns, environmentKey, type ExcludedRun } from "../results/eligibility.ts";
import type { RunRecord } from "../results/types.ts";
import { pct } from "../../ui/format.ts";

/** Default number of good nights in a baseline. */
export const DEFAULT_WINDOW = 7;
/** Fewest baseline nights for the window test (between-night noise measured); fewer uses the runs test. */
export const MIN_WINDOW_NIGHTS = 3;
/** Default significance level of the (Holm-adjusted) one-sided tests. */
export const DEFAULT_ALPHA = 0.05;
/** Fewest points (baseline nights and tonight) for a drift test. */
export const MIN_DRIFT_POINTS = 5;

/** One stored night of a (stack, scenario). */
export interface Night {
  invocation: string;
  runs: RunRecord[];
  /** eligible runs in the night's environment */
  used: RunRecord[];
  excluded: ExcludedRun[];
  /** environmentKey of the used runs, null when none is eligible */
  environment: string | null;
}

/** Group runs (oldest first) into nights by invocation, each split into used and excluded runs. */
export function nightsOf(runs: RunRecord[]): Night[] {
  const by = new Map<string, RunRecord[]>();
  for (const r of runs) {
    if (!by.has(r.invocation)) by.set(r.invocation, []);
    by.get(r.invocation)!.push(r);
  }
  return [...by.keys()].sort().map((invocation) => {
    const nightRuns = by.get(invocation)!;
    const e = eligibleRuns(nightRuns, { key: environmentKey });
    return { invocation, runs: nightRuns, used: e.used, excluded: e.excluded, environment: e.machine };
  });
}

/** A baseline night of a cell: its value (median rows/s of its used runs) and how many runs it rests on. */
export interface BaselineNight {
  invocation: string;
  rowsPerSecond: number;
  runs: number;
}

/** A night left out of a cell's baseline, and why. */
export interface SkippedNight {
  invocation: string;
  reason: string;
}

/** The drift of a cell over its baseline nights and tonight. */
export interface Drift {
  points: number;
  /** Theil–Sen slope as a change per day (e^slope − 1), with its 90 % interval */
  perDay: number;
  ci: [number, number] | null;
  /** the change the slope gives over the days spanned (e^(slope·days) − 1) */
  overWindow: number;
  days: number;
  /** Mann–Kendall two-sided p-value, and Holm-adjusted over the cells of the night */
  p: number;
  pAdjusted: number;
  /** pAdjusted ≤ α and the interval excludes 0 */
  detected: boolean;
  direction: "slower" | "faster" | "none";
}

/** One cell of one night against its baseline, before the multiple-testing step (`significant` is set by it). */
export interface CellTest {
  cell: string;
  /** "window": k ≥ 3 baseline nights; "runs": 1–2 nights, pooled runs; null: not tested (see reason) */
  method: "window" | "runs" | null;
  baselineNights: BaselineNight[];
  skippedNights: SkippedNight[];
  /** median of the baseline nights' values ("window") or of their pooled runs ("runs"); NaN without a baseline */
  baselineRowsPerSecond: number;
  /** spread of the baseline nights' values (min, max, interquartile range, coefficient of variation); null below 2 nights */
  spread: { min: number; max: number; iqr: number; cv: number } | null;
  latestRowsPerSecond: number;
  ratio: number | null;
  ci: [number, number] | null;
  /** one-sided p-values, raw; NaN when not tested */
  p: { slower: number; faster: number };
  /** Holm-adjusted over the cells tested with it; NaN when not tested */
  pAdjusted: { slower: number; faster: number };
  /** the floor applied (fraction) and where it comes from */
  noiseFloor: number | null;
  noiseFloorSource: "nights" | "aa" | null;
  /** the effect passes minChange and the floor in this direction (the p-value still decides) */
  candidate: "slower" | "faster" | null;
  change: "slower" | "faster" | "none" | null;
  significant: boolean;
  /** fewer than 3 runs a side in the runs test: no verdict */
  inconclusive: boolean;
  /** no earlier night in tonight's environment, while earlier nights exist */
  environmentChanged: boolean;
  n: { previous: number; latest: number; nights: number };
  drift: Drift | null;
  reason: string;
}

export interface WindowOptions {
  /** baseline nights (K), default 7 */
  window?: number;
  /** use baseline nights of any environment (differences are listed by the caller) */
  force?: boolean;
  alpha?: number;
  minChange?: number;
  /** stored back-to-back A/A floors per cell (fraction) */
  aaFloors?: ReadonlyMap<string, number>;
}

/** Days since the first night, from ISO invocations; the night's index when an invocation is not a date. */
function daysOf(invocations: string[]): number[] {
  const t = invocations.map((i) => Date.parse(i));
  if (t.some((x) => !Number.isFinite(x))) return invocations.map((_, i) => i);
  return t.map((x) => (x - t[0]!) / 86_400_000);
}

const cellValues = (night: Night, cell: string): number[] =>
  rowsPerSecondOf(night.used.filter((r) => r.cell === cell));

/** The largest |m_j / median(m_−j) − 1| over the baseline nights: the cross-night A/A floor. */
export function crossNightFloor(values: readonly number[]): number {
  let floor = 0;
  values.forEach((v, j) => {
    const others = values.filter((_, i) => i !== j);
    floor = Math.max(floor, Math.abs(v / median(others) - 1));
  });
  return floor;
}

function sd(xs: readonly number[]): number {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

/** The test of one cell of `nights[i]` against the baseline chosen from nights before it (not yet Holm-adjusted). */
function testCell(
  nights: Night[],
  i: number,
  cell: string,
  regressed: ReadonlyArray<ReadonlySet<string>>,
  o: Required<Omit<WindowOptions, "aaFloors">> & { aaFloors: ReadonlyMap<string, number> },
): CellTest {
  const night = nights[i]!;
  const latest = cellValues(night, cell);
  const baseline: Night[] = [];
  const skipped: SkippedNight[] = [];
  let earlier = 0;
  for (let j = i - 1; j >= 0 && baseline.length < o.window; j--) {
    const nj = nights[j]!;
    if (cellValues(nj, cell).length === 0) continue;
    earlier++;
    if (!o.force && nj.environment !== night.environment) {
      skipped.push({ invocation: nj.invocation, reason: `other environment: ${nj.environment}` });
      continue;
    }
    if (regressed[j]!.has(cell)) {
      skipped.push({ invocation: nj.invocation, reason: "a regression night: never part of a baseline" });
      continue;
    }
    baseline.unshift(nj);
  }
  const nightValues = baseline.map((n) => median(cellValues(n, cell)));
  const baselineNights = baseline.map((n, k) => ({
    invocation: n.invocation,
    rowsPerSecond: nightValues[k]!,
    runs: cellValues(n, cell).length,
  }));
  const latestMedian = median(latest);
  const aa = o.aaFloors.get(cell) ?? null;
  const base: CellTest = {
    cell,
    method: null,
    baselineNights,
    skippedNights: skipped,
    baselineRowsPerSecond: nightValues.length ? median(nightValues) : Number.NaN,
    spread:
      nightValues.length >= 2
        ? {
            min: Math.min(...nightValues),
            max: Math.max(...nightValues),
            iqr: quantile(nightValues, 0.75) - quantile(nightValues, 0.25),
            cv: sd(nightValues) / (nightValues.reduce((s, x) => s + x, 0) / nightValues.length),
          }
        : null,
    latestRowsPerSecond: latestMedian,
    ratio: null,
    ci: null,
    p: { slower: Number.NaN, faster: Number.NaN },
    pAdjusted: { slower: Number.NaN, faster: Number.NaN },
    noiseFloor: aa,
    noiseFloorSource: aa === null ? null : "aa",
    candidate: null,
    change: null,
    significant: false,
    inconclusive: false,
    environmentChanged: false,
    n: {
      previous: baseline.reduce((s, n) => s + cellValues(n, cell).length, 0),
      latest: latest.length,
      nights: baseline.length,
    },
    drift: null,
    reason: "",
  };
  if (latest.length === 0)
    return { ...base, reason: "no usable run of this cell tonight (see the excluded runs)" };
  if (baseline.length === 0) {
    if (earlier > 0 && skipped.every((s) => s.reason.startsWith("other environment"))) {
      return {
        ...base,
        environmentChanged: true,
        reason:
          "environment changed, no verdict: no earlier night ran in this environment (this night starts its baseline)",
      };
    }
    return {
      ...base,
      reason:
        earlier > 0
          ? "no good night to compare with (every earlier night regressed)"
          : "no earlier night of this cell",
    };
  }
  let test: CellTest;
  if (baseline.length >= MIN_WINDOW_NIGHTS) {
    const logs = nightValues.map(Math.log);
    const k = logs.length;
    const mean = logs.reduce((s, x) => s + x, 0) / k;
    const se = sd(logs) * Math.sqrt(1 + 1 / k);
    const x = Math.log(latestMedian);
    const pSlower = se > 0 ? studentTCdf((x - mean) / se, k - 1) : x < mean ? 0 : x > mean ? 1 : 0.5;
    const ratio = latestMedian / base.baselineRowsPerSecond;
    const half = studentTQuantile(0.95, k - 1) * se;
    const nights = crossNightFloor(nightValues);
    const floor = aa !== null && aa > nights ? aa : nights;
    test = {
      ...base,
      method: "window",
      ratio,
      ci: [ratio * Math.exp(-half), ratio * Math.exp(half)],
      p: { slower: pSlower, faster: 1 - pSlower },
      noiseFloor: floor,
      noiseFloorSource: aa !== null && aa > nights ? "aa" : "nights",
    };
  } else {
    const pooled = baseline.flatMap((n) => cellValues(n, cell));
    const cmp = compareSamples(pooled, latest, { minChange: o.minChange, noiseFloor: aa });
    test = {
      ...base,
      method: "runs",
      baselineRowsPerSecond: median(pooled),
      ratio: Number.isFinite(cmp.ratio) ? cmp.ratio : null,
      ci: cmp.ci,
    };
    if (cmp.inconclusive)
      return {
        ...test,
        inconclusive: true,
        change: "none",
        reason: `${cmp.reason} (baseline: ${baseline.length} night(s))`,
      };
    const rank = rankSumTest(pooled, latest);
    test.p = { slower: rank.pSlower, faster: rank.pFaster };
  }
  const ratio = test.ratio ?? Number.NaN;
  const floor = test.noiseFloor ?? 0;
  const slower = 1 - ratio >= o.minChange && 1 - ratio > floor;
  const faster = ratio - 1 >= o.minChange && ratio - 1 > floor;
  return { ...test, candidate: slower ? "slower" : faster ? "faster" : null };
}

/** Apply Holm over tests (both directions) and set change, significant and reason. */
export function settle(tests: CellTest[], alpha = DEFAULT_ALPHA, minChange = DEFAULT_MIN_CHANGE): void {
  const slower = holmAdjust(tests.map((t) => t.p.slower));
  const faster = holmAdjust(tests.map((t) => t.p.faster));
  const m = tests.filter((t) => !Number.isNaN(t.p.slower)).length;
  tests.forEach((t, i) => {
    t.pAdjusted = { slower: slower[i]!, faster: faster[i]! };
    if (t.method === null || t.inconclusive) return;
    const dir = t.candidate;
    const p = dir === null ? Math.min(t.pAdjusted.slower, t.pAdjusted.faster) : t.pAdjusted[dir];
    t.significant = dir !== null && p <= alpha;
    t.change = t.significant ? dir : "none";
    const base =
      t.method === "window"
        ? `${t.n.nights} baseline nights, floor ${pct(t.noiseFloor ?? 0, 1)} across nights${t.noiseFloorSource === "aa" ? " (the stored A/A floor, larger)" : ""}`
        : `${t.n.nights} baseline night(s), ${t.n.previous} runs pooled, rank-sum test${t.noiseFloor !== null ? `, A/A floor ${pct(t.noiseFloor, 1)}` : ""}`;
    const delta = Math.abs((t.ratio ?? 1) - 1);
    t.reason =
      dir === null
        ? `|ratio − 1| = ${pct(delta, 1)} is below ${pct(minChange, 1)} or within the floor (${base})`
        : `${dir}: |ratio − 1| = ${pct(delta, 1)}, p = ${t.p[dir].toPrecision(2)}, Holm-adjusted over ${m} cell(s) ${t.pAdjusted[dir].toPrecision(2)} ${t.significant ? "≤" : ">"} α = ${alpha} (${base})`;
  });
}

/** The drift of a cell from its baseline nights and tonight's value, before the Holm step over drift tests. */
function driftOf(t: CellTest, latestInvocation: string): Drift | null {
  const points = [
    ...t.baselineNights.map((n) => ({ invocation: n.invocation, v: n.rowsPerSecond })),
    { invocation: latestInvocation, v: t.latestRowsPerSecond },
  ].filter((p) => Number.isFinite(p.v) && p.v > 0);
  if (points.length < MIN_DRIFT_POINTS) return null;
  const days = daysOf(points.map((p) => p.invocation));
  const tr = trendOf(
    days,
    points.map((p) => Math.log(p.v)),
  );
  const span = days[days.length - 1]! - days[0]!;
  return {
    points: points.length,
    perDay: Math.expm1(tr.slope),
    ci: tr.ci ? [Math.expm1(tr.ci[0]), Math.expm1(tr.ci[1])] : null,
    overWindow: Math.expm1(tr.slope * span),
    days: span,
    p: tr.p,
    pAdjusted: Number.NaN,
    detected: false,
    direction: "none",
  };
}

/** Holm over the drift tests of a night's cells, then mark the detected drifts. */
export function settleDrift(tests: CellTest[], alpha = DEFAULT_ALPHA): void {
  const adj = holmAdjust(tests.map((t) => t.drift?.p ?? Number.NaN));
  tests.forEach((t, i) => {
    if (!t.drift) return;
    t.drift.pAdjusted = adj[i]!;
    const ci = t.drift.ci;
    t.drift.detected = adj[i]! <= alpha && ci !== null && (ci[0] > 0 || ci[1] < 0);
    t.drift.direction = t.drift.detected ? (t.drift.perDay < 0 ? "slower" : "faster") : "none";
  });
}

/**
 * Replay the verdicts of a (stack, scenario)'s nights in order, and return the tests of the last night unsettled
 * (the caller applies Holm over every cell of every pair of tonight with `settle` and `settleDrift`). Earlier nights
 * are settled over their own pair's cells, which is what decides whether they enter later baselines.
 */
export function testLatestNight(nights: Night[], options: WindowOptions = {}): CellTest[] {
  const o = {
    window: options.window ?? DEFAULT_WINDOW,
    force: options.force ?? false,
    alpha: options.alpha ?? DEFAULT_ALPHA,
    minChange: options.minChange ?? DEFAULT_MIN_CHANGE,
    aaFloors: options.aaFloors ?? new Map<string, number>(),
  };
  if (!Number.isInteger(o.window) || o.window < 1)
    throw new RangeError(`window must be a positive integer, got ${o.window}`);
  const regressed: Array<Set<string>> = [];
  let last: CellTest[] = [];
  nights.forEach((night, i) => {
    const cells = [...new Set(night.used.map((r) => r.cell))].sort(cellSort);
    // cells of tonight with no eligible run still get a row (saying so)
    if (i === nights.length - 1)
      for (const c of new Set(night.runs.map((r) => r.cell))) if (!cells.includes(c)) cells.push(c);
    const tests = cells.map((c) => testCell(nights, i, c, regressed, o));
    if (i === nights.length - 1) {
      for (const t of tests) t.drift = driftOf(t, night.invocation);
      last = tests;
    } else {
      settle(tests, o.alpha, o.minChange);
      regressed.push(new Set(tests.filter((t) => t.significant && t.change === "slower").map((t) => t.cell)));
    }
  });
  return last;
}
