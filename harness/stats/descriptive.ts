/**
 * Descriptive statistics over plain number arrays. Percentiles use linear interpolation between closest ranks
 * (Hyndman & Fan type 7, the default of R and NumPy). Empty input gives NaN.
 */

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (pos - lo);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** Sample standard deviation (n − 1). */
export function stddev(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) ** 2;
  return Math.sqrt(ss / (values.length - 1));
}

/** Coefficient of variation: stddev / mean (0 when the mean is 0). */
export function cv(values: readonly number[]): number {
  const m = mean(values);
  return m === 0 ? 0 : stddev(values) / m;
}

/** Interquartile range: quantile(0.75) − quantile(0.25), both Hyndman & Fan type 7 (NaN for empty input). */
export function iqr(values: readonly number[]): number {
  return quantile(values, 0.75) - quantile(values, 0.25);
}

/**
 * The ordinary least-squares line through (x_i, y_i): y ≈ meanY + slope·(x − meanX); slope = Σ(x − x̄)(y − ȳ) / Σ(x − x̄)²,
 * 0 when every x is the same (units of y per unit of x).
 * @throws RangeError when x and y differ in length or are empty
 */
export function leastSquares(
  x: readonly number[],
  y: readonly number[],
): { slope: number; meanX: number; meanY: number } {
  if (x.length !== y.length || x.length === 0)
    throw new RangeError(`leastSquares: ${x.length} x values and ${y.length} y values`);
  const meanX = mean(x);
  const meanY = mean(y);
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i]! - meanX) * (y[i]! - meanY);
    sxx += (x[i]! - meanX) ** 2;
  }
  return { slope: sxx === 0 ? 0 : sxy / sxx, meanX, meanY };
}
