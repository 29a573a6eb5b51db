// The statistics behind the nightly verdict, against published values: Student's t (tables of Abramowitz & Stegun,
// 26.7), Holm's adjustment (Holm 1979's procedure by hand), the exact rank-sum distribution (Mann & Whitney 1947's
// small-sample counts), Mann–Kendall and Theil–Sen (Gilbert 1987, ch. 16, computed by hand on small series).
import { describe, expect, it } from "vitest";
import {
  normalCdf,
  normalQuantile,
  studentTCdf,
  studentTQuantile,
} from "../../../harness/stats/distributions.ts";
import { holmAdjust } from "../../../harness/stats/multiple.ts";
import { rankSumTest } from "../../../harness/stats/rank.ts";
import { trendOf } from "../../../harness/stats/trend.ts";
import { crossNightFloor } from "../../../harness/nightly/window.ts";

describe("Student's t and the normal distribution", () => {
  it("matches the tables: t(0.975, 6) = 2.447, t(0.95, 4) = 2.132, Cauchy at −1 is 1/4, z(0.975) = 1.960", () => {
    expect(studentTCdf(-2.447, 6)).toBeCloseTo(0.025, 4);
    expect(studentTCdf(2.132, 4)).toBeCloseTo(0.95, 4);
    expect(studentTCdf(-1, 1)).toBeCloseTo(0.25, 12);
    expect(studentTCdf(0, 3)).toBeCloseTo(0.5, 12);
    expect(studentTQuantile(0.95, 6)).toBeCloseTo(1.943, 3);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalQuantile(0.95)).toBeCloseTo(1.644854, 5);
  });
});

describe("Holm", () => {
  it("adjusts step-down: sorted p times (m − j + 1), running maximum, capped at 1, in the input's order", () => {
    const adj = holmAdjust([0.01, 0.04, 0.03, 0.5]);
    expect(adj[0]).toBeCloseTo(0.04, 12); // 4 × 0.01
    expect(adj[2]).toBeCloseTo(0.09, 12); // 3 × 0.03
    expect(adj[1]).toBeCloseTo(0.09, 12); // max(0.09, 2 × 0.04 = 0.08)
    expect(adj[3]).toBeCloseTo(0.5, 12);
    expect(holmAdjust([0.3, Number.NaN, 0.6])).toEqual([0.6, Number.NaN, 0.6]);
    expect(() => holmAdjust([1.2])).toThrow(RangeError);
  });
});

describe("exact rank-sum", () => {
  it("3 against 3 fully separated: p = 1/20; 6 against 3: 1/84; overlapping: the share of the 20 arrangements", () => {
    expect(rankSumTest([10, 11, 12], [1, 2, 3])).toMatchObject({ u: 9, pSlower: 0.05, pFaster: 1 });
    expect(rankSumTest([10, 11, 12, 13, 14, 15], [1, 2, 3]).pSlower).toBeCloseTo(1 / 84, 12);
    // U = 3 of 9; counts of U = 0..9 for 3 and 3 are 1 1 2 3 3 3 3 2 1 1: P(U ≥ 3) = 16/20, P(U ≥ 6) = 7/20
    expect(rankSumTest([1, 2, 3], [1.5, 2.5, 3.5])).toMatchObject({ u: 3, pSlower: 0.8, pFaster: 0.35 });
    expect(() => rankSumTest([], [1])).toThrow(RangeError);
    // beyond 10 000 pairs, the normal approximation: 120 against 120 identical in distribution gives p near ½
    const a = Array.from({ length: 120 }, (_, i) => i * 2);
    const b = Array.from({ length: 120 }, (_, i) => i * 2 + 1);
    const big = rankSumTest(a, b);
    expect(big.pSlower).toBeGreaterThan(0.4);
    expect(big.pFaster).toBeGreaterThan(0.4);
  });
});

describe("Mann–Kendall and Theil–Sen", () => {
  it("a strictly falling series of 8: S = −28, Var(S) = 65.33, p < 0.001, slope the median pairwise slope", () => {
    const x = [0, 1, 2, 3, 4, 5, 6, 7];
    const y = x.map((i) => 100 - 2 * i + (i % 2 === 0 ? 0.1 : -0.1));
    const t = trendOf(x, y);
    expect(t.s).toBe(-28);
    expect(t.varS).toBeCloseTo((8 * 7 * 21) / 18, 12);
    expect(t.z).toBeCloseTo(-27 / Math.sqrt(65.3333333), 6);
    expect(t.p).toBeLessThan(0.001);
    expect(t.slope).toBeCloseTo(-2, 1);
    expect(t.ci![0]).toBeLessThanOrEqual(t.slope);
    expect(t.ci![1]).toBeGreaterThanOrEqual(t.slope);
    expect(t.ci![1]).toBeLessThan(0);
  });

  it("a series without trend: S near 0, interval around 0; ties lower Var(S)", () => {
    const t = trendOf([0, 1, 2, 3, 4, 5], [5, 7, 4, 6, 5.5, 5.2]);
    expect(t.p).toBeGreaterThan(0.5);
    expect(t.ci![0]).toBeLessThan(0);
    expect(t.ci![1]).toBeGreaterThan(0);
    expect(trendOf([0, 1, 2, 3], [1, 1, 2, 2]).varS).toBeCloseTo((4 * 3 * 13 - 2 * (2 * 1 * 9)) / 18, 12);
  });
});

describe("the cross-night floor", () => {
  it("is the largest deviation of a night from the median of the others", () => {
    // 1040 against median(1000, 960, 1020, 980, 1010, 990) = 995; 960 against 1005
    expect(crossNightFloor([1000, 1040, 960, 1020, 980, 1010, 990])).toBeCloseTo(
      Math.max(1040 / 995 - 1, 1 - 960 / 1005),
      12,
    );
    expect(crossNightFloor([100, 100, 100])).toBe(0);
  });
});
