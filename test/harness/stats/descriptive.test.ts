import { describe, expect, it } from "vitest";
import { cv, leastSquares, mean, median, quantile, stddev } from "../../../harness/stats/descriptive.ts";

describe("descriptive statistics", () => {
  it("matches known values (type 7 quantiles as in R and NumPy)", () => {
    const xs = [1, 2, 3, 4, 10];
    expect(median(xs)).toBe(3);
    expect(quantile(xs, 0.25)).toBe(2);
    expect(quantile(xs, 0.9)).toBeCloseTo(7.6, 10);
    expect(mean(xs)).toBe(4);
    expect(stddev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.13809, 5);
    expect(cv([10, 10, 10])).toBe(0);
  });
  it("gives NaN for empty input instead of a made-up zero", () => {
    expect(median([])).toBeNaN();
    expect(mean([])).toBeNaN();
  });
  it("leastSquares: Anscombe's first quartet set (slope 0.5001, means 9 and 7.5009), a vertical set, bad input", () => {
    const x = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5];
    const y = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68];
    const fit = leastSquares(x, y);
    expect(fit.slope).toBeCloseTo(0.5001, 4);
    expect(fit.meanX).toBe(9);
    expect(fit.meanY).toBeCloseTo(7.5009, 4);
    expect(leastSquares([3, 3], [1, 2]).slope).toBe(0);
    expect(() => leastSquares([1], [1, 2])).toThrow(RangeError);
  });
});
