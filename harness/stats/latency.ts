/**
 * Latency summaries of HdrHistogram histograms (hdr-histogram-js), shared by the generators' request loop
 * (harness/generators/loop.ts) and the query phase (harness/runner/query-load.ts).
 */
import type * as hdr from "hdr-histogram-js";

/**
 * mean, p50, p99 and max in ms of a non-empty histogram of µs. hdr-histogram-js answers a percentile with its
 * bucket's highest equivalent value, which exceeds the largest value recorded when the percentiles share the top
 * bucket (seen: p50 73.599 ms above p99 73.584 ms = the max, and 200 values of 73.582–73.584 ms give 73.599 for
 * both): each is held to the max, which no percentile can exceed, so that p50 ≤ p99 ≤ max.
 */
export function latencySummaryMs(h: Pick<hdr.Histogram, "mean" | "maxValue" | "getValueAtPercentile">): {
  mean: number;
  p50: number;
  p99: number;
  max: number;
} {
  const at = (pct: number): number => Math.min(h.getValueAtPercentile(pct), h.maxValue) / 1000;
  return { mean: h.mean / 1000, p50: at(50), p99: at(99), max: h.maxValue / 1000 };
}
