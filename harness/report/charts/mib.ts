/**
 * MiB/s over time for a file replay (write-up 004's chart): per window the log MiB/s, the bytes of the log lines the
 * replayed file carried (SeriesPoint.logMibPerSec), beside the wire MiB/s (SeriesPoint.mibPerSec: the encoded rows
 * as sent, with tracking fields and framing). A series without log bytes is drawn as wire MiB/s and says so.
 * Drawn for a run whose scenario replays a file (scenarioConfig.source.file) or whose series carries log bytes.
 */
import type { TopLevelSpec } from "vega-lite";
import type { SeriesPoint } from "../../results/types.ts";
import type { ReportRun } from "../data.ts";
import { PHASE_COLORS, phaseSpans } from "./timeline.ts";

/** SeriesPoint.logMibPerSec (the log-bytes change adds it to harness/results/types.ts; read here by shape). */
const logMib = (p: SeriesPoint): number | null => {
  const v = (p as { logMibPerSec?: unknown }).logMibPerSec;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
};

/** Whether the run replayed a file (run.json scenarioConfig.source.file). */
export function isFileReplay(r: ReportRun): boolean {
  const cfg = r.run.scenarioConfig as { source?: { file?: unknown } } | null;
  return typeof cfg?.source?.file === "string";
}

/** The points the chart draws (exported for the tests): one per window and measure with a rate. */
export function mibPoints(
  r: ReportRun,
): Array<{ elapsedS: number; phase: string; what: string; mib: number }> {
  const hasLog = r.series.some((p) => logMib(p) !== null);
  return r.series.flatMap((p) => [
    ...(hasLog && logMib(p) !== null
      ? [{ elapsedS: p.elapsedS, phase: p.phase, what: "log MiB/s", mib: logMib(p)! }]
      : []),
    ...(typeof p.mibPerSec === "number"
      ? [{ elapsedS: p.elapsedS, phase: p.phase, what: "wire MiB/s", mib: p.mibPerSec }]
      : []),
  ]);
}

/** The spec, or null when the run neither replays a file nor carries log bytes, or has no rate. */
export function mibSpec(r: ReportRun): TopLevelSpec | null {
  const hasLog = r.series.some((p) => logMib(p) !== null);
  if (!hasLog && !isFileReplay(r)) return null;
  const values = mibPoints(r);
  if (values.length === 0) return null;
  return {
    title: {
      text: `${r.label}: ${hasLog ? "log MiB/s" : "wire MiB/s"} over time`,
      subtitle: hasLog
        ? isFileReplay(r)
          ? "log: the bytes of the lines replayed; wire: the rows as sent (framing and tracking fields)"
          : "log: the bytes of the generated log text; wire: the rows as sent (framing and tracking fields)"
        : "wire MiB/s: this run recorded no log bytes (SeriesPoint.logMibPerSec)",
    },
    width: 480,
    height: 160,
    layer: [
      {
        data: { values: phaseSpans(r.series) },
        mark: { type: "rect", opacity: 0.9 },
        encoding: {
          x: { field: "from", type: "quantitative", title: "seconds since load started" },
          x2: { field: "to" },
          fill: { field: "phase", type: "nominal", scale: PHASE_COLORS, legend: { title: "phase" } },
        },
      },
      {
        data: { values },
        mark: { type: "line", strokeWidth: 2, point: { size: 14 } },
        encoding: {
          x: { field: "elapsedS", type: "quantitative" },
          y: { field: "mib", type: "quantitative", title: "MiB/s" },
          color: {
            field: "what",
            type: "nominal",
            scale: { domain: ["log MiB/s", "wire MiB/s"], range: ["#e45756", "#9ecae9"] },
            legend: { title: null, orient: "right" },
          },
          tooltip: [{ field: "elapsedS", format: ".1f" }, { field: "what" }, { field: "mib", format: ".2f" }],
        },
      },
    ],
    resolve: { scale: { color: "independent" } },
  } as unknown as TopLevelSpec;
}
