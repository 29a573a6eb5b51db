/**
 * Comparing two samples of a rate (higher is faster, e.g. rows/s of replicate runs): the ratio of medians with
 * a percentile bootstrap interval (Efron & Tibshirani 1993), called a change only when the interval excludes 1 and
 * the ratio differs from 1 by at least `minChange`; each side's spread, flagged erratic when its coefficient of
 * variation exceeds `erraticCv`.
 */
import { bootstrapRatioOfMedians, DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES } from "./bootstrap.ts";
import { cv, iqr, median } from "./descriptive.ts";

/** Default smallest |ratio − 1| called a change (5 %). */
export const DEFAULT_MIN_CHANGE = 0.05;
/** Default coefficient of variation above which a sample is erratic (10 %). */
export const DEFAULT_ERRATIC_CV = 0.1;

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
export function describeSample(values: readonly number[], options: { erraticCv?: number } = {}): SampleDescription {
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
  /** the interval excludes 1 AND |ratio − 1| ≥ minChange */
  significant: boolean;
  erratic: { baseline: boolean; contender: boolean };
  n: { baseline: number; contender: number };
  baseline: SampleDescription;
  contender: SampleDescription;
  /** why the verdict is what it is, in words (e.g. "fewer than 2 values: baseline n=1") */
  reason: string;
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

/**
 * Compare two samples of a rate (higher = faster): ratio of medians contender / baseline, its percentile bootstrap
 * interval (Efron & Tibshirani 1993; bootstrap.ts), significance (interval excludes 1 and |ratio − 1| ≥ minChange)
 * and each side's erratic flag (cv > erraticCv). With fewer than 2 values on a side there is no interval,
 * significant is false and `reason` says so. Non-finite values are dropped before anything is computed.
 */
export function compareSamples(baseline: readonly number[], contender: readonly number[], options: CompareOptions = {}): SampleComparison {
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const minChange = options.minChange ?? DEFAULT_MIN_CHANGE;
  const erraticCv = options.erraticCv ?? DEFAULT_ERRATIC_CV;
  const base = baseline.filter(Number.isFinite);
  const cont = contender.filter(Number.isFinite);
  const db = describeSample(base, { erraticCv });
  const dc = describeSample(cont, { erraticCv });
  const ratio = db.median !== 0 ? dc.median / db.median : Number.NaN;
  const common = {
    ratio, confidence,
    erratic: { baseline: db.erratic, contender: dc.erratic },
    n: { baseline: db.n, contender: dc.n },
    baseline: db, contender: dc,
  };
  if (db.n < 2 || dc.n < 2) {
    const short = [db.n < 2 ? `baseline n=${db.n}` : "", dc.n < 2 ? `contender n=${dc.n}` : ""].filter(Boolean).join(", ");
    return { ...common, ci: null, change: "none", significant: false, reason: `fewer than 2 values (${short}): no interval, no verdict` };
  }
  if (!Number.isFinite(ratio) || db.median <= 0) {
    return { ...common, ci: null, change: "none", significant: false, reason: `baseline median is ${db.median}: no ratio` };
  }
  const boot = bootstrapRatioOfMedians(base, cont, { seed: options.seed ?? 1, confidence, resamples: options.resamples ?? DEFAULT_RESAMPLES });
  const ci: [number, number] = [boot.low, boot.high];
  const excludesOne = boot.low > 1 || boot.high < 1;
  const bigEnough = Math.abs(ratio - 1) >= minChange;
  const significant = excludesOne && bigEnough;
  const interval = `${pct(confidence).replace(".0 %", " %")} interval [${boot.low.toFixed(3)}, ${boot.high.toFixed(3)}]`;
  const reason = !excludesOne ? `${interval} includes 1`
    : !bigEnough ? `${interval} excludes 1 but |ratio − 1| = ${pct(Math.abs(ratio - 1))} is below the ${pct(minChange)} minimum change`
    : `${interval} excludes 1 and |ratio − 1| = ${pct(Math.abs(ratio - 1))} ≥ ${pct(minChange)}`;
  return { ...common, ci, change: significant ? (ratio > 1 ? "faster" : "slower") : "none", significant, reason };
}
