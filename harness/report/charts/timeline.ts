/**
 * One run over time (series.jsonl): stored rows/s per window (real elapsed time between count queries) and ingest
 * lag, on a shared time axis, with the warmup, measure and drain phases shaded, and the run's fault steps (run.json
 * `timeline`) as vertical markers at their start (dashed red rules, labelled with the step's name on the top panel;
 * a step that took longer than a moment is also drawn as a band from its start to its end).
 */
import type { TopLevelSpec } from "vega-lite";
import type { ReportRun } from "../data.ts";
import type { SeriesPoint } from "../../results/types.ts";

/** The phases' band colours (shared with ./delivery.ts). */
export const PHASE_COLORS = {
  domain: ["warmup", "measure", "drain"],
  range: ["#f2e6c9", "#e3eef9", "#ececec"],
};

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

/** The run's steps that ran, as marker data: name, start and end in seconds since load started. */
export function stepMarks(
  run: ReportRun["run"],
): Array<{ step: string; startS: number; endS: number; status: string }> {
  return (run.timeline ?? [])
    .filter((e) => e.startS !== null)
    .map((e) => ({
      step: `${e.index}: ${e.name}`,
      startS: e.startS!,
      endS: e.endS ?? e.startS!,
      status: e.status,
    }));
}

/**
 * Vega-Lite layers that draw `marks` over a panel: a band per step from start to end, a dashed rule at each start,
 * and (with `labels`) the step's name at the top. [] without marks. Shared by the per-run charts (./resources.ts).
 */
export function stepMarkerLayers(marks: ReturnType<typeof stepMarks>, labels: boolean): object[] {
  if (marks.length === 0) return [];
  const x = { field: "startS", type: "quantitative" };
  return [
    {
      data: { values: marks },
      mark: { type: "rect", color: "#b00020", opacity: 0.12 },
      encoding: { x, x2: { field: "endS" } },
    },
    {
      data: { values: marks },
      mark: { type: "rule", color: "#b00020", strokeDash: [4, 3], strokeWidth: 1.5 },
      encoding: {
        x,
        tooltip: [
          { field: "step" },
          { field: "startS", format: ".2f" },
          { field: "endS", format: ".2f" },
          { field: "status" },
        ],
      },
    },
    ...(labels
      ? [
          {
            data: { values: marks },
            mark: {
              type: "text",
              color: "#b00020",
              align: "left",
              baseline: "top",
              dx: 3,
              dy: 2,
              angle: 0,
              fontSize: 10,
            },
            encoding: { x, y: { value: 0 }, text: { field: "step" } },
          },
        ]
      : []),
  ];
}

/** A layered panel: phase bands under one line of `field` (null values are left out), the step markers on top. */
function panel(
  values: object[],
  spans: object[],
  field: string,
  title: string,
  color: string,
  markers: object[] = [],
): object {
  return {
    width: 480,
    height: 140,
    layer: [
      {
        data: { values: spans },
        mark: { type: "rect", opacity: 0.9 },
        encoding: {
          x: { field: "from", type: "quantitative", title: "seconds since load started" },
          x2: { field: "to" },
          color: {
            field: "phase",
            type: "nominal",
            scale: PHASE_COLORS,
            title: "phase",
            legend: { title: "phase", orient: "bottom", direction: "horizontal" },
          },
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
      ...markers,
    ],
  };
}

/** The spec, or null when the run has no series with a rate. */
export function timelineSpec(r: ReportRun): TopLevelSpec | null {
  const values = r.series.map((p) => ({
    elapsedS: p.elapsedS,
    phase: p.phase,
    rowsPerSec: p.rowsPerSec,
    lagMs: p.lagMs,
  }));
  if (!values.some((v) => v.rowsPerSec !== null)) return null;
  const spans = phaseSpans(r.series);
  const hasLag = values.some((v) => v.lagMs !== null);
  const marks = stepMarks(r.run);
  return {
    title: `${r.label}: throughput and ingest lag${marks.length ? " (red: fault steps)" : ""}`,
    vconcat: [
      panel(values, spans, "rowsPerSec", "stored rows/s", "#4c78a8", stepMarkerLayers(marks, true)),
      ...(hasLag
        ? [panel(values, spans, "lagMs", "ingest lag, ms", "#e45756", stepMarkerLayers(marks, false))]
        : []),
    ],
    resolve: { scale: { color: "shared" } },
  } as TopLevelSpec;
}
