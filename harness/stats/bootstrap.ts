/**
 * Percentile bootstrap (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13) of the ratio of
 * medians of two independent samples, contender / baseline. Each resample draws n values with replacement from
 * each sample separately (a two-sample bootstrap), takes the ratio of the two medians, and the interval is the
 * (1 − c)/2 and (1 + c)/2 quantiles (Hyndman & Fan type 7) of the resampled ratios.
 *
 * Randomness comes from Mulberry32 (core/events/source.ts), seeded: the same inputs and seed always give the
 * same interval.
 */
import { mulberry32 } from "../../core/events/source.ts";
import { median, quantile } from "./descriptive.ts";

/** Default number of bootstrap resamples. */
export const DEFAULT_RESAMPLES = 10_000;
/** Default confidence level of the interval (90 %). */
export const DEFAULT_CONFIDENCE = 0.9;

/**
 * Seeded uniform PRNG on [0, 1): Mulberry32's uint32 output / 2^32. Any integer seed (taken modulo 2^32);
 * the same seed always yields the same stream.
 */
export function seededUniform(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}

/** Ratio of medians with its bootstrap interval. `ratio`, `low` and `high` are unitless (contender / baseline). */
export interface RatioInterval {
  /** median(contender) / median(baseline) of the observed samples */
  ratio: number;
  /** lower and upper percentile bounds of the resampled ratios */
  low: number;
  high: number;
  /** confidence level, 0..1 */
  confidence: number;
  /** number of resamples drawn */
  resamples: number;
}

export interface BootstrapOptions {
  /** PRNG seed (integer); default 1 */
  seed?: number;
  /** confidence level in (0, 1); default 0.9 */
  confidence?: number;
  /** number of resamples B, a positive integer; default 10 000 */
  resamples?: number;
}

/** Median of the first n entries of a scratch buffer (sorted in place). */
function medianInPlace(buf: Float64Array, n: number): number {
  const view = buf.subarray(0, n).sort();
  const mid = n >> 1;
  return n % 2 === 1 ? view[mid]! : (view[mid - 1]! + view[mid]!) / 2;
}

function checkSample(name: string, values: readonly number[]): void {
  if (values.length === 0) throw new RangeError(`bootstrap: the ${name} sample is empty`);
  for (const v of values) {
    if (!Number.isFinite(v))
      throw new RangeError(`bootstrap: the ${name} sample holds a non-finite value (${v})`);
  }
}

/**
 * Percentile bootstrap interval of median(contender) / median(baseline) (Efron & Tibshirani 1993, ch. 13;
 * interval bounds are type 7 quantiles of the B resampled ratios). Samples of one value give a degenerate
 * interval [ratio, ratio]. A zero baseline median gives ±Infinity or NaN, as the division does.
 * @param baseline the reference sample (e.g. rows/s of the baseline runs)
 * @param contender the sample compared with it
 * @throws RangeError when a sample is empty or holds a non-finite value, when confidence is not in (0, 1), or
 *         when resamples is not a positive integer
 */
export function bootstrapRatioOfMedians(
  baseline: readonly number[],
  contender: readonly number[],
  options: BootstrapOptions = {},
): RatioInterval {
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const seed = options.seed ?? 1;
  checkSample("baseline", baseline);
  checkSample("contender", contender);
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`bootstrap: confidence must be in (0, 1), got ${confidence}`);
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError(`bootstrap: resamples must be a positive integer, got ${resamples}`);

  const ratio = median(contender) / median(baseline);
  const next = mulberry32(seed);
  const nb = baseline.length;
  const nc = contender.length;
  const bufB = new Float64Array(nb);
  const bufC = new Float64Array(nc);
  const ratios = new Array<number>(resamples);
  for (let b = 0; b < resamples; b++) {
    // index = floor(u32 · n / 2^32): uniform over 0..n−1 up to a bias below n / 2^32
    for (let i = 0; i < nb; i++) bufB[i] = baseline[Math.floor((next() * nb) / 4294967296)]!;
    for (let i = 0; i < nc; i++) bufC[i] = contender[Math.floor((next() * nc) / 4294967296)]!;
    ratios[b] = medianInPlace(bufC, nc) / medianInPlace(bufB, nb);
  }
  const alpha = (1 - confidence) / 2;
  return { ratio, low: quantile(ratios, alpha), high: quantile(ratios, 1 - alpha), confidence, resamples };
}
