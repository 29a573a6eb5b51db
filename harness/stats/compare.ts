/**
 * Comparing two samples of a rate (higher is faster, e.g. rows/s of replicate runs): the ratio of medians with
 * a percentile bootstrap interval (Efron & Tibshirani 1993), called a change only when
 *   1. each side has at least `minSamples` values (default 3; fewer is "inconclusive (n=…)", see below),
 *   2. the interval excludes 1,
 *   3. |ratio − 1| ≥ minChange (default 5 %), and
 *   4. |ratio − 1| exceeds the measured noise floor when one is given (an A/A result of the same stack and cell).
 * Each side's spread is described and flagged erratic when its coefficient of variation exceeds `erraticCv`.
 *
 * Why 3: the percentile interval of a median from n = 2 values per side is the whole range
 * [min(c)/max(b), max(c)/min(b)] (each extreme of the resampled median has probability 1/4, and each extreme ratio
 * 1/16 > 5 %), so it misses the true ratio exactly when the two samples' ranges do not overlap: for two samples of
 * 2 from one continuous scale family that is 2·(2!·2!/4!) = 1/3 of the time, i.e. 67 % coverage, never 90 %.
 * With n = 3 the same argument (extreme median probability 7/27, extreme ratio 0.067 > 5 %) gives overlap
 * probability 1 − 2·(3!·3!/6!) = 0.90. test/harness/stats/bootstrap.test.ts checks both on synthetic samples.
 */
import { bootstrapRatioOfMedians, DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES } from "./bootstrap.ts";
import { cv, iqr, median } from "./descriptive.ts";
import { pct } from "../../ui/format.ts";

/** Default smallest |ratio − 1| called a change (5 %). */
export const DEFAULT_MIN_CHANGE = 0.05;
/** Default coefficient of variation above which a sample is erratic (10 %). */
export const DEFAULT_ERRATIC_CV = 0.1;
/**
 * Default smallest number of values per side for a verdict (3): with 2 a 90 % percentile bootstrap interval of
 * the ratio of medians covers the truth only 2/3 of the time (see the module comment).
 */
export const DEFAULT_MIN_SAMPLES = 3;

/** Spread of one sample; all figures in the sample's unit except cv (unitless). */
export interface SampleDescription {
  n: number;
  median: number;
  /** interquartile range, type 7 quartiles */
  iqr: number;
  min: number;
  max: number;
  /** coefficient of variation: sample standard deviation (n − 1) / mean; NaN with fewer than 2 values */
  cv: number;
  /** cv > erraticCv (false with fewer than 2 values: the spread is unknown, not small) */
  erratic: boolean;
}

/**
 * Describe a sample: n, median, IQR, min, max (NaN when empty), coefficient of variation (NaN with fewer than
 * 2 values) and the erratic flag (cv > erraticCv, default 0.1). Quantiles are Hyndman & Fan type 7.
 */
export function describeSample(
  values: readonly number[],
  options: { erraticCv?: number } = {},
): SampleDescription {
  const erraticCv = options.erraticCv ?? DEFAULT_ERRATIC_CV;
  const n = values.length;
  const c = n >= 2 ? cv(values) : Number.NaN;
  return {
    n,
    median: median(values),
    iqr: iqr(values),
    min: n ? Math.min(...values) : Number.NaN,
    max: n ? Math.max(...values) : Number.NaN,
    cv: c,
    erratic: n >= 2 && c > erraticCv,
  };
}

export type Change = "faster" | "slower" | "none";

export interface CompareOptions {
  /** bootstrap PRNG seed; default 1 */
  seed?: number;
  /** confidence level of the interval; default 0.9 */
  confidence?: number;
  /** smallest |ratio − 1| called a change; default 0.05 */
  minChange?: number;
  /** cv above which a side is flagged erratic; default 0.1 */
  erraticCv?: number;
  /** bootstrap resamples; default 10 000 */
  resamples?: number;
  /** fewest values per side for a verdict; fewer gives "inconclusive (n=…)"; default 3, at least 2 */
  minSamples?: number;
  /**
   * measured noise as a fraction (e.g. 0.04 = 4 %, from an A/A comparison: see `noiseFloorOf`); a change must have
   * |ratio − 1| above it as well as ≥ minChange. Undefined or null: no A/A result, only minChange applies.
   */
  noiseFloor?: number | null;
}

/**
 * The noise floor of an A/A comparison (the same stack and cell, two groups of runs): the larger of its interval's
 * half-width and its observed |ratio − 1|, as a fraction. Either can be the larger: a wide interval with a ratio near
 * 1, or a narrow one (few, tight values) that still missed 1. NaN when the A/A comparison has no interval.
 */
export function noiseFloorOf(aa: Pick<SampleComparison, "ratio" | "ci">): number {
  if (aa.ci === null || !Number.isFinite(aa.ratio)) return Number.NaN;
  return Math.max((aa.ci[1] - aa.ci[0]) / 2, Math.abs(aa.ratio - 1));
}

/** The verdict of a comparison of two rate samples. */
export interface SampleComparison {
  /** median(contender) / median(baseline); > 1 means the contender is faster */
  ratio: number;
  /** percentile bootstrap interval of the ratio; null with fewer than 2 values on a side */
  ci: [number, number] | null;
  confidence: number;
  /** "faster" or "slower" only when significant */
  change: Change;
  /** enough values on both sides, the interval excludes 1, |ratio − 1| ≥ minChange and above the noise floor */
  significant: boolean;
  /** fewer than minSamples values on a side: no verdict either way ("inconclusive (n=…)") */
  inconclusive: boolean;
  /** the noise floor applied (fraction), null when none was given */
  noiseFloor: number | null;
  erratic: { baseline: boolean; contender: boolean };
  n: { baseline: number; contender: number };
  baseline: SampleDescription;
  contender: SampleDescription;
  /** why the verdict is what it is, in words (e.g. "inconclusive (n=2/2): fewer than 3 values per side") */
  reason: string;
}

/**
 * Compare two samples of a rate (higher = faster): ratio of medians contender / baseline, its percentile bootstrap
 * interval (Efron & Tibshirani 1993; bootstrap.ts), and the verdict: significant when both sides have at least
 * minSamples values, the interval excludes 1, |ratio − 1| ≥ minChange and |ratio − 1| > noiseFloor (when given).
 * With fewer than minSamples values on a side the result is inconclusive (the interval is still given from 2 values
 * up, for display); `reason` says why in every case. Each side's erratic flag is cv > erraticCv. Non-finite values
 * are dropped before anything is computed.
 * @throws RangeError when minSamples is below 2 or not an integer
 */
export function compareSamples(
  baseline: readonly number[],
  contender: readonly number[],
  options: CompareOptions = {},
): SampleComparison {
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const minChange = options.minChange ?? DEFAULT_MIN_CHANGE;
  const erraticCv = options.erraticCv ?? DEFAULT_ERRATIC_CV;
  const minSamples = options.minSamples ?? DEFAULT_MIN_SAMPLES;
  if (!Number.isInteger(minSamples) || minSamples < 2)
    throw new RangeError(`compareSamples: minSamples must be an integer ≥ 2, got ${minSamples}`);
  const noiseFloor =
    options.noiseFloor != null && Number.isFinite(options.noiseFloor) ? options.noiseFloor : null;
  const base = baseline.filter(Number.isFinite);
  const cont = contender.filter(Number.isFinite);
  const db = describeSample(base, { erraticCv });
  const dc = describeSample(cont, { erraticCv });
  const ratio = db.median !== 0 ? dc.median / db.median : Number.NaN;
  const common = {
    ratio,
    confidence,
    noiseFloor,
    erratic: { baseline: db.erratic, contender: dc.erratic },
    n: { baseline: db.n, contender: dc.n },
    baseline: db,
    contender: dc,
  };
  const inconclusive = db.n < minSamples || dc.n < minSamples;
  const nText = `n=${db.n}/${dc.n}`;
  const short = `inconclusive (${nText}): fewer than ${minSamples} values per side`;
  if (db.n < 2 || dc.n < 2) {
    return {
      ...common,
      ci: null,
      change: "none",
      significant: false,
      inconclusive: true,
      reason: `${short}; no interval`,
    };
  }
  if (!Number.isFinite(ratio) || db.median <= 0) {
    return {
      ...common,
      ci: null,
      change: "none",
      significant: false,
      inconclusive,
      reason: `baseline median is ${db.median}: no ratio`,
    };
  }
  const boot = bootstrapRatioOfMedians(base, cont, {
    seed: options.seed ?? 1,
    confidence,
    resamples: options.resamples ?? DEFAULT_RESAMPLES,
  });
  const ci: [number, number] = [boot.low, boot.high];
  const interval = `${pct(confidence, 1).replace(".0 %", " %")} interval [${boot.low.toFixed(3)}, ${boot.high.toFixed(3)}]`;
  if (inconclusive) {
    return {
      ...common,
      ci,
      change: "none",
      significant: false,
      inconclusive: true,
      reason: `${short} (a percentile bootstrap cannot reach ${pct(confidence, 1)} coverage; ${interval} shown for information)`,
    };
  }
  const excludesOne = boot.low > 1 || boot.high < 1;
  const delta = Math.abs(ratio - 1);
  const bigEnough = delta >= minChange;
  const aboveNoise = noiseFloor === null || delta > noiseFloor;
  const significant = excludesOne && bigEnough && aboveNoise;
  const reason = !excludesOne
    ? `${interval} includes 1`
    : !bigEnough
      ? `${interval} excludes 1 but |ratio − 1| = ${pct(delta, 1)} is below the ${pct(minChange, 1)} minimum change`
      : !aboveNoise
        ? `${interval} excludes 1 but |ratio − 1| = ${pct(delta, 1)} is within the A/A noise floor ${pct(noiseFloor!, 1)}`
        : `${interval} excludes 1 and |ratio − 1| = ${pct(delta, 1)} ≥ ${pct(minChange, 1)}${noiseFloor === null ? "" : ` and > the A/A noise floor ${pct(noiseFloor, 1)}`}`;
  return {
    ...common,
    ci,
    change: significant ? (ratio > 1 ? "faster" : "slower") : "none",
    significant,
    inconclusive: false,
    reason,
  };
}
