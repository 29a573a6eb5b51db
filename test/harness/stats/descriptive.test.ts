import { describe, expect, it } from "vitest";
import { cv, mean, median, quantile, stddev } from "../../../harness/stats/descriptive.ts";

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
});
