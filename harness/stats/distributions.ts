/**
 * Distribution functions the nightly tests need, computed in double precision without a dependency:
 * - the log-gamma function by the Lanczos approximation (g = 7, 9 coefficients; Numerical Recipes, 3rd ed., §6.1);
 * - the regularised incomplete beta function I_x(a, b) by its continued fraction, evaluated with the modified Lentz
 *   method (Numerical Recipes, 3rd ed., §6.4, "betacf"), relative error below 1e-12 for the arguments used here;
 * - Student's t cumulative distribution, P(T ≤ t) for ν degrees of freedom: for t < 0 it is ½·I_{ν/(ν+t²)}(ν/2, ½),
 *   for t ≥ 0 one minus that (Abramowitz & Stegun §26.7, through the incomplete beta function of §26.5);
 * - the standard normal cumulative distribution Φ as the limit of Student's t (ν = 1e7: |error| < 1e-7, enough
 *   for a p-value or a confidence level);
 * - quantiles of both by bisection on the CDF over [−1000, 1000] (100 halvings: to double precision).
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The continued fraction of I_x(a, b) (modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const TINY = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** The regularised incomplete beta function I_x(a, b), x in [0, 1], a, b > 0. */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // the continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) beyond
  return x < (a + 1) / (a + b + 2)
    ? (front * betaContinuedFraction(x, a, b)) / a
    : 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

/** P(T ≤ t) for Student's t with ν > 0 degrees of freedom. */
export function studentTCdf(t: number, nu: number): number {
  if (!(nu > 0)) throw new RangeError(`studentTCdf: degrees of freedom must be > 0, got ${nu}`);
  if (t === Number.POSITIVE_INFINITY) return 1;
  if (t === Number.NEGATIVE_INFINITY) return 0;
  const tail = 0.5 * incompleteBeta(nu / (nu + t * t), nu / 2, 0.5);
  return t < 0 ? tail : 1 - tail;
}

/** Φ(z), the standard normal CDF (as Student's t with 1e7 degrees of freedom; |error| < 1e-7). */
export const normalCdf = (z: number): number => studentTCdf(z, 1e7);

/** The p-quantile of a continuous, increasing CDF on the reals, by bisection on [−40·scale, 40·scale]. */
function quantileOf(cdf: (x: number) => number, p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`quantile: p must be in (0, 1), got ${p}`);
  let lo = -1e3;
  let hi = 1e3;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (cdf(mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The p-quantile of the standard normal distribution. */
export const normalQuantile = (p: number): number => quantileOf(normalCdf, p);

/** The p-quantile of Student's t with ν degrees of freedom. */
export const studentTQuantile = (p: number, nu: number): number => quantileOf((x) => studentTCdf(x, nu), p);
