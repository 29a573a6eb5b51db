import { describe, expect, it } from "vitest";
import { bootstrapRatioOfMedians, seededUniform } from "../../../harness/stats/bootstrap.ts";
import { compareSamples, describeSample } from "../../../harness/stats/compare.ts";
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
    expect(bootstrapRatioOfMedians([10], [12], { resamples: 50 })).toMatchObject({ ratio: 1.2, low: 1.2, high: 1.2 });
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
    const r = compareSamples(base, base.map((v) => v * 1.02), { seed: 3 });
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
    expect(r.change).toBe("none");
    expect(r.reason).toMatch(/fewer than 2 values \(baseline n=1\)/);
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
