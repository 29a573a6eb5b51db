/**
 * One run's delivery latency over time (series.jsonl SeriesPoint.delivery: the sink's stored_at − sent_at of the rows
 * that arrived in each window, harness/runner/delivery.ts): p50 and p99 per window, in ms, on the time axis of the
 * timeline (./timeline.ts), with the phases shaded. This is the flush time write-up 000 (docs/write-ups.md) watched,
 * measured at the destination for every collector.
 */
import type { TopLevelSpec } from "vega-lite";
import type { ReportRun } from "../data.ts";
import { PHASE_COLORS, phaseSpans } from "./timeline.ts";

/** The spec, or null when no window of the run holds a delivery latency (a sink without stored-at, older results). */
export function deliverySpec(r: ReportRun): TopLevelSpec | null {
  const values = r.series.flatMap((p) =>
    p.delivery
      ? [
          {
            elapsedS: p.elapsedS,
            phase: p.phase,
            percentile: "p50",
            ms: p.delivery.p50Ms,
            rows: p.delivery.rows,
          },
          {
            elapsedS: p.elapsedS,
            phase: p.phase,
            percentile: "p99",
            ms: p.delivery.p99Ms,
            rows: p.delivery.rows,
          },
        ]
      : [],
  );
  if (values.length === 0) return null;
  const d = r.run.summary?.deliveryLatency;
  const resolution =
    d && !("unavailable" in d) && d.resolutionMs > 1 ? ` (stamped to ${d.resolutionMs} ms)` : "";
  const x = { field: "elapsedS", type: "quantitative", title: "seconds since load started" };
  return {
    title: `${r.label}: delivery latency at the sink${resolution}`,
    width: 480,
    height: 160,
    layer: [
      {
        data: { values: phaseSpans(r.series) },
        mark: { type: "rect", opacity: 0.9 },
        encoding: {
          x: { field: "from", type: "quantitative", title: x.title },
          x2: { field: "to" },
          fill: {
            field: "phase",
            type: "nominal",
            scale: PHASE_COLORS,
            legend: { title: "phase", orient: "bottom", direction: "horizontal" },
          },
        },
      },
      {
        data: { values },
        mark: { type: "line", strokeWidth: 2, point: { size: 14 } },
        encoding: {
          x,
          y: { field: "ms", type: "quantitative", title: "stored_at − sent_at, ms" },
          color: {
            field: "percentile",
            type: "nominal",
            scale: { domain: ["p50", "p99"], range: ["#4c78a8", "#e45756"] },
            legend: { title: "per window", orient: "right" },
          },
          tooltip: [
            { field: "elapsedS", format: ".1f" },
            { field: "phase" },
            { field: "percentile" },
            { field: "ms", format: ",.0f" },
            { field: "rows", format: "," },
          ],
        },
      },
    ],
    resolve: { scale: { color: "independent" } },
  } as TopLevelSpec;
}
