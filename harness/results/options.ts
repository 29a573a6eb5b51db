/**
 * The options both comparisons (harness/results/across-stacks.ts, harness/results/across-runs.ts) take.
 */
import type { CompareOptions } from "../stats/compare.ts";

/**
 * Statistics options shared by both comparisons, plus `force` (compare despite mismatched component versions) and
 * `noiseFloors` (apply stored A/A noise floors when present; default true). `noiseFloor` itself is set per cell.
 */
export interface ComparisonOptions extends Omit<CompareOptions, "noiseFloor"> {
  force?: boolean;
  noiseFloors?: boolean;
}
