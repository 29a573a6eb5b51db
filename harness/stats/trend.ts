/**
 * Slow drift over a window of nights: the Mann–Kendall trend test (H. B. Mann 1945, "Nonparametric tests against
 * trend", Econometrica 13:245–259; M. G. Kendall 1975, "Rank Correlation Methods") and the Theil–Sen slope with its
 * confidence interval (H. Theil 1950; P. K. Sen 1968, "Estimates of the regression coefficient based on Kendall's
 * tau", JASA 63:1379–1389), as given step by step in R. O. Gilbert 1987, "Statistical Methods for Environmental
 * Pollution Monitoring", ch. 16 (the test, then the slope and its interval).
 *
 * For points (x_i, y_i) in time order: S = Σ_{i<j} sign(y_j − y_i); without ties Var(S) = n(n − 1)(2n + 5)/18
 * (ties in y reduce it by Σ t(t − 1)(2t + 5)/18 over groups of t tied values); Z = (S − sign(S))/√Var(S) (continuity
 * correction) and the two-sided p-value is 2·(1 − Φ(|Z|)). The slope is the median of the N pairwise slopes
 * (y_j − y_i)/(x_j − x_i), x_j ≠ x_i; its 1 − α interval is bounded by the M1-th and (M2 + 1)-th smallest of them,
 * M1 = (N − C)/2, M2 = (N + C)/2, C = z_{1−α/2}·√Var(S) (ranks rounded outward).
 * Nightly applies it to ln(night median rows/s) against days since the first night, so a slope of s is a change of
 * e^s − 1 per day.
 */
import { median } from "./descriptive.ts";
import { normalCdf, normalQuantile } from "./distributions.ts";

/** The trend of a series: Mann–Kendall statistic and p-value, Theil–Sen slope and its interval (units of y per x). */
export interface Trend {
  n: number;
  s: number;
  varS: number;
  z: number;
  /** two-sided p-value of "no monotonic trend" */
  p: number;
  slope: number;
  /** Theil–Sen interval at `confidence`, null with fewer than 3 points */
  ci: [number, number] | null;
  confidence: number;
}

/**
 * Mann–Kendall test and Theil–Sen slope of y against x (time order, x increasing).
 * @throws RangeError when x and y differ in length
 */
export function trendOf(x: readonly number[], y: readonly number[], confidence = 0.9): Trend {
  if (x.length !== y.length) throw new RangeError(`trendOf: ${x.length} times but ${y.length} values`);
  const n = y.length;
  let s = 0;
  const slopes: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      s += Math.sign(y[j]! - y[i]!);
      if (x[j] !== x[i]) slopes.push((y[j]! - y[i]!) / (x[j]! - x[i]!));
    }
  }
  const ties = new Map<number, number>();
  for (const v of y) ties.set(v, (ties.get(v) ?? 0) + 1);
  let tieTerm = 0;
  for (const t of ties.values()) tieTerm += t * (t - 1) * (2 * t + 5);
  const varS = (n * (n - 1) * (2 * n + 5) - tieTerm) / 18;
  const z = varS > 0 ? (s - Math.sign(s)) / Math.sqrt(varS) : 0;
  const p = Math.min(1, 2 * (1 - normalCdf(Math.abs(z))));
  slopes.sort((a, b) => a - b);
  const slope = slopes.length ? median(slopes) : Number.NaN;
  let ci: [number, number] | null = null;
  if (n >= 3 && slopes.length > 0) {
    const c = normalQuantile(1 - (1 - confidence) / 2) * Math.sqrt(varS);
    const big = slopes.length;
    const m1 = Math.max(1, Math.floor((big - c) / 2));
    const m2 = Math.min(big, Math.ceil((big + c) / 2) + 1);
    ci = [slopes[m1 - 1]!, slopes[m2 - 1]!];
  }
  return { n, s, varS, z, p, slope, ci, confidence };
}
