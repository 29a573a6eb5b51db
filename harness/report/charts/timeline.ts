/**
 * One run over time (series.jsonl): stored rows/s per window (real elapsed time between count queries) and ingest
 * lag, on a shared time axis, with the warmup, measure and drain phases shaded.
 */
import type { TopLevelSpec } from "vega-lite";
import type { ReportRun } from "../data.ts";
import type { SeriesPoint } from "../../results/types.ts";

/** The phases' band colours (shared with ./delivery.ts). */
export const PHASE_COLORS = { domain: ["warmup", "measure", "drain"], range: ["#f2e6c9", "#e3eef9", "#ececec"] };

/** Contiguous phase spans: [start, end] in elapsed seconds (a phase starts where the previous window ended). */
export function phaseSpans(series: SeriesPoint[]): Array<{ phase: string; from: number; to: number }> {
  const spans: Array<{ phase: string; from: number; to: number }> = [];
  let prevEnd = 0;
  for (const p of series) {
    const last = spans[spans.length - 1];
    if (last && last.phase === p.phase) last.to = p.elapsedS;
    else spans.push({ phase: p.phase, from: last ? prevEnd : Math.min(0, p.elapsedS), to: p.elapsedS });
    prevEnd = p.elapsedS;
  }
  return spans;
}

/** A layered panel: phase bands under one line of `field` (null values are left out). */
function panel(values: object[], spans: object[], field: string, title: string, color: string): object {
  return {
    width: 480, height: 140,
    layer: [
      {
        data: { values: spans },
        mark: { type: "rect", opacity: 0.9 },
        encoding: {
          x: { field: "from", type: "quantitative", title: "seconds since load started" },
          x2: { field: "to" },
          color: { field: "phase", type: "nominal", scale: PHASE_COLORS, title: "phase", legend: { title: "phase", orient: "bottom", direction: "horizontal" } },
        },
      },
      {
        data: { values },
        transform: [{ filter: `isValid(datum['${field}']) && isFinite(datum['${field}'])` }],
        mark: { type: "line", color, strokeWidth: 2, point: { size: 14, color } },
        encoding: {
          x: { field: "elapsedS", type: "quantitative", title: "seconds since load started" },
          y: { field, type: "quantitative", title },
          tooltip: [{ field: "elapsedS", format: ".1f" }, { field: "phase" }, { field, format: ",.0f" }],
        },
      },
    ],
  };
}

/** The spec, or null when the run has no series with a rate. */
export function timelineSpec(r: ReportRun): TopLevelSpec | null {
  const values = r.series.map((p) => ({ elapsedS: p.elapsedS, phase: p.phase, rowsPerSec: p.rowsPerSec, lagMs: p.lagMs }));
  if (!values.some((v) => v.rowsPerSec !== null)) return null;
  const spans = phaseSpans(r.series);
  const hasLag = values.some((v) => v.lagMs !== null);
  return {
    title: `${r.label}: throughput and ingest lag`,
    vconcat: [
      panel(values, spans, "rowsPerSec", "stored rows/s", "#4c78a8"),
      ...(hasLag ? [panel(values, spans, "lagMs", "ingest lag, ms", "#e45756")] : []),
    ],
    resolve: { scale: { color: "shared" } },
  } as TopLevelSpec;
}
