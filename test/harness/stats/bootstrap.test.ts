import { describe, expect, it } from "vitest";
import { bootstrapRatioOfMedians, seededUniform } from "../../../harness/stats/bootstrap.ts";
import { compareSamples, describeSample, noiseFloorOf } from "../../../harness/stats/compare.ts";
import { iqr } from "../../../harness/stats/descriptive.ts";

/** Standard normal deviates by Box–Muller over the seeded uniform stream. */
function normals(seed: number): () => number {
  const u = seededUniform(seed);
  return () => {
    const a = u() || 2 ** -32;
    return Math.sqrt(-2 * Math.log(a)) * Math.cos(2 * Math.PI * u());
  };
}

/** n draws from a lognormal with median `med` and log-sd `sigma`. */
const lognormal = (z: () => number, n: number, med: number, sigma: number): number[] =>
  Array.from({ length: n }, () => med * Math.exp(sigma * z()));

describe("percentile bootstrap of the ratio of medians", () => {
  const base = [100, 104, 98, 101, 103, 99, 102];
  const cont = [121, 118, 125, 119, 122, 120, 123];

  it("is deterministic for a seed and differs across seeds", () => {
    const a = bootstrapRatioOfMedians(base, cont, { seed: 7 });
    const b = bootstrapRatioOfMedians(base, cont, { seed: 7 });
    const c = bootstrapRatioOfMedians(base, cont, { seed: 8 });
    expect(a).toEqual(b);
    expect(a.resamples).toBe(10_000);
    expect(a.confidence).toBe(0.9);
    expect(a.ratio).toBeCloseTo(121 / 101, 12);
    expect(a.low).toBeLessThanOrEqual(a.ratio);
    expect(a.high).toBeGreaterThanOrEqual(a.ratio);
    expect(c.ratio).toBe(a.ratio);
    // with many distinct values the interval bounds depend on the resamples drawn, hence on the seed
    const z = normals(11);
    const b30 = lognormal(z, 30, 1000, 0.2);
    const c30 = lognormal(z, 30, 1100, 0.2);
    const x = bootstrapRatioOfMedians(b30, c30, { seed: 7, resamples: 500 });
    expect(bootstrapRatioOfMedians(b30, c30, { seed: 7, resamples: 500 })).toEqual(x);
    expect(bootstrapRatioOfMedians(b30, c30, { seed: 8, resamples: 500 }).low).not.toBe(x.low);
  });

  it("gives a degenerate interval for one value per side and rejects empty or non-finite samples", () => {
    expect(bootstrapRatioOfMedians([10], [12], { resamples: 50 })).toMatchObject({
      ratio: 1.2,
      low: 1.2,
      high: 1.2,
    });
    expect(() => bootstrapRatioOfMedians([], [1])).toThrow(RangeError);
    expect(() => bootstrapRatioOfMedians([1, Number.NaN], [1])).toThrow(/non-finite/);
    expect(() => bootstrapRatioOfMedians([1], [1], { confidence: 1 })).toThrow(/confidence/);
    expect(() => bootstrapRatioOfMedians([1], [1], { resamples: 0 })).toThrow(/resamples/);
  });

  it("covers the true ratio of medians in roughly 90 % of trials (lognormal samples, truths 1.0 and 1.2)", () => {
    const trials = 400;
    const z = normals(2024);
    for (const truth of [1.0, 1.2]) {
      let covered = 0;
      for (let t = 0; t < trials; t++) {
        const b = lognormal(z, 10, 50_000, 0.1);
        const c = lognormal(z, 10, 50_000 * truth, 0.1);
        const r = bootstrapRatioOfMedians(b, c, { seed: t + 1, resamples: 2000 });
        if (r.low <= truth && truth <= r.high) covered++;
      }
      const coverage = covered / trials;
      expect(coverage).toBeGreaterThanOrEqual(0.8);
      expect(coverage).toBeLessThanOrEqual(0.97);
    }
  });
});

describe("coverage of the 90 % interval by sample size (why a verdict needs 3 values per side)", () => {
  /**
   * Share of trials whose interval covers the true ratio, for samples of n per side drawn from lognormals with
   * medians 50 000 and 50 000 × truth. With n ≤ 3 the 5 % and 95 % quantiles of the resampled ratio are its extremes
   * (min(c)/max(b), max(c)/min(b)), so coverage = P(the ranges of c/truth and b overlap) = 1 − 2·n!n!/(2n)!:
   * 2/3 for n = 2 and 0.90 for n = 3 (harness/stats/compare.ts).
   */
  function coverage(n: number, truth: number, trials: number, seed: number): number {
    const z = normals(seed);
    let covered = 0;
    for (let t = 0; t < trials; t++) {
      const b = lognormal(z, n, 50_000, 0.05);
      const c = lognormal(z, n, 50_000 * truth, 0.05);
      const r = bootstrapRatioOfMedians(b, c, { seed: t + 1 });
      if (r.low <= truth && truth <= r.high) covered++;
    }
    return covered / trials;
  }

  it("n = 2: the interval is the whole range of ratios and covers the truth about 2/3 of the time, far below 90 %", () => {
    const r = bootstrapRatioOfMedians([100, 110], [90, 99]);
    expect(r.low).toBeCloseTo(90 / 110, 12);
    expect(r.high).toBeCloseTo(99 / 100, 12);
    for (const truth of [1, 0.8]) {
      const c = coverage(2, truth, 600, 77 + truth * 10);
      // expected 0.667; 600 trials give a standard error of 0.019
      expect(c).toBeGreaterThan(0.6);
      expect(c).toBeLessThan(0.74);
    }
  });

  it("n = 3 reaches 90 % (ranges overlap with probability 1 − 2/20)", () => {
    const c = coverage(3, 1, 600, 91);
    // expected 0.90; standard error 0.012
    expect(c).toBeGreaterThan(0.86);
    expect(c).toBeLessThan(0.94);
  });
});

describe("compareSamples", () => {
  it("calls a tight 1.2 ratio significant and faster, and its inverse slower", () => {
    const base = [1000, 1010, 990, 1005, 995];
    const cont = base.map((v) => v * 1.2);
    const r = compareSamples(base, cont, { seed: 3 });
    expect(r.ratio).toBeCloseTo(1.2, 10);
    expect(r.ci).not.toBeNull();
    expect(r.ci![0]).toBeGreaterThan(1);
    expect(r.significant).toBe(true);
    expect(r.change).toBe("faster");
    expect(r.n).toEqual({ baseline: 5, contender: 5 });
    expect(r.erratic).toEqual({ baseline: false, contender: false });
    const back = compareSamples(cont, base, { seed: 3 });
    expect(back.change).toBe("slower");
    expect(back.significant).toBe(true);
  });

  it("does not call a 2 % difference a change even when the interval excludes 1", () => {
    const base = [1000, 1001, 999, 1000.5, 999.5];
    const r = compareSamples(
      base,
      base.map((v) => v * 1.02),
      { seed: 3 },
    );
    expect(r.ci![0]).toBeGreaterThan(1);
    expect(r.significant).toBe(false);
    expect(r.change).toBe("none");
    expect(r.reason).toMatch(/below the 5\.0 % minimum change/);
  });

  it("does not call a change when the interval includes 1", () => {
    const r = compareSamples([900, 1100, 1000, 950, 1050], [1000, 1200, 1060, 980, 1150], { seed: 3 });
    expect(r.ci![0]).toBeLessThan(1);
    expect(r.significant).toBe(false);
    expect(r.reason).toMatch(/includes 1/);
  });

  it("flags erratic input (CV above the threshold) per side", () => {
    const r = compareSamples([1000, 1010, 990, 1005], [500, 1500, 900, 1300], { seed: 1 });
    expect(r.erratic).toEqual({ baseline: false, contender: true });
    expect(r.contender.cv).toBeGreaterThan(0.1);
    expect(compareSamples([1000, 1010], [500, 1500], { erraticCv: 0.9 }).erratic.contender).toBe(false);
  });

  it("gives no interval and no verdict with fewer than 2 values on a side, and says why", () => {
    const r = compareSamples([1000], [2000, 2100, 2050]);
    expect(r.ratio).toBeCloseTo(2.05, 10);
    expect(r.ci).toBeNull();
    expect(r.significant).toBe(false);
    expect(r.inconclusive).toBe(true);
    expect(r.change).toBe("none");
    expect(r.reason).toMatch(/^inconclusive \(n=1\/3\): fewer than 3 values per side; no interval/);
  });

  it("calls 2 replicates per side inconclusive, even far apart; 3 tight ones 30 % apart are a change", () => {
    // the false alarm this rule exists for: two identical nights of 2 replicates whose ranges happen not to overlap
    const two = compareSamples([100_000, 101_000], [93_000, 94_000]);
    expect(two.ci).not.toBeNull();
    expect(two.ci![1]).toBeLessThan(1); // the interval alone would have called it a 0.93x regression
    expect(two.inconclusive).toBe(true);
    expect(two.significant).toBe(false);
    expect(two.change).toBe("none");
    expect(two.reason).toMatch(/^inconclusive \(n=2\/2\)/);
    const three = compareSamples([1000, 1010, 990], [700, 707, 693]);
    expect(three.inconclusive).toBe(false);
    expect(three.significant).toBe(true);
    expect(three.change).toBe("slower");
    // the threshold is an option (≥ 2)
    expect(compareSamples([100_000, 101_000], [93_000, 94_000], { minSamples: 2 }).significant).toBe(true);
    expect(() => compareSamples([1, 2], [1, 2], { minSamples: 1 })).toThrow(/minSamples/);
  });

  it("a change must exceed the A/A noise floor as well as 5 %", () => {
    const base = [1000, 1004, 996, 1002, 998];
    const cont = base.map((v) => v * 0.92); // 8 % slower, tight: significant without a noise floor
    expect(compareSamples(base, cont).significant).toBe(true);
    const noisy = compareSamples(base, cont, { noiseFloor: 0.1 });
    expect(noisy.significant).toBe(false);
    expect(noisy.noiseFloor).toBe(0.1);
    expect(noisy.reason).toMatch(/within the A\/A noise floor 10\.0 %/);
    const quiet = compareSamples(base, cont, { noiseFloor: 0.03 });
    expect(quiet.significant).toBe(true);
    expect(quiet.reason).toMatch(/> the A\/A noise floor 3\.0 %/);
    // the floor is the larger of the A/A interval's half-width and its observed |ratio − 1|
    expect(noiseFloorOf({ ratio: 1.01, ci: [0.95, 1.09] })).toBeCloseTo(0.07, 12);
    expect(noiseFloorOf({ ratio: 0.94, ci: [0.93, 0.95] })).toBeCloseTo(0.06, 12);
    expect(noiseFloorOf({ ratio: 1, ci: null })).toBeNaN();
    // a NaN floor (an A/A result without interval) is no floor
    expect(compareSamples(base, cont, { noiseFloor: Number.NaN }).noiseFloor).toBeNull();
  });
});

describe("describeSample", () => {
  it("gives n, median, type 7 IQR, min, max, CV and the erratic flag", () => {
    const d = describeSample([1, 2, 3, 4, 10]);
    expect(d).toMatchObject({ n: 5, median: 3, iqr: 2, min: 1, max: 10 });
    expect(d.cv).toBeCloseTo(Math.sqrt(12.5) / 4, 10);
    expect(d.erratic).toBe(true);
    expect(iqr([1, 2, 3, 4])).toBeCloseTo(1.5, 12);
    expect(describeSample([5]).cv).toBeNaN();
    expect(describeSample([5]).erratic).toBe(false);
    expect(describeSample([]).median).toBeNaN();
  });
});
