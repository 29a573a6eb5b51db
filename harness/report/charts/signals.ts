/**
 * The collector's and the sink's own signals over time, drawn when series.jsonl carries them: the collector's flush
 * and queue signals (SeriesPoint.collector, named as the collector names them: Fluentd monitor_agent's
 * buffer_queue_length, slow_flush_count, flush_time_count…, the OTel Collector's otelcol_exporter_queue_size…,
 * syslog-ng's queued, rsyslog's queue.size) and the sink's merges (SeriesPoint.sink values, OpenSearch node stats
 * `merges.<field>`). One panel per signal, a line per host and plugin; counters are drawn as read (cumulative where the
 * program's are). A line at 0 throughout is named in the subtitle rather than drawn, unless every line is.
 */
import type { TopLevelSpec } from "vega-lite";
import type { ReportRun } from "../data.ts";

/** One value of one signal at one sample. */
export interface SignalPoint {
  elapsedS: number;
  /** the panel: the signal's own name ("slow_flush_count", "merges.current") */
  signal: string;
  /** the line: host and the program's full key ("collector ib_sink.slow_flush_count") */
  series: string;
  value: number;
}

/** The collector's flush and queue signals, by the names the collectors give them (the match is the panel). */
export const COLLECTOR_SIGNALS =
  /(buffer_queue_length|buffer_total_queued_size|slow_flush_count|flush_time_count|retry_count|otelcol_exporter_queue_size|otelcol_exporter_queue_capacity|otelcol_exporter_send_failed_log_records|queue\.size|queue_size|queued)/;

/** The sink's merge signals (OpenSearch / Elasticsearch node stats `merges.<field>`, or `merges_<field>`). */
export const SINK_SIGNALS =
  /merges[._](current|current_docs|total|total_time_in_millis|total_time_ms|total_throttled_time_in_millis)$/;

/** The collector signals of a run's series (exported for the tests: what the chart charts). */
export function collectorPoints(r: ReportRun): SignalPoint[] {
  return r.series.flatMap((p) =>
    Object.entries(p.collector?.hosts ?? {}).flatMap(([host, values]) =>
      Object.entries(values).flatMap(([key, value]) => {
        const m = COLLECTOR_SIGNALS.exec(key);
        return m && Number.isFinite(value)
          ? [{ elapsedS: p.elapsedS, signal: m[1]!, series: `${host} ${key}`, value }]
          : [];
      }),
    ),
  );
}

/** The sink's merge signals of a run's series (exported for the tests). */
export function sinkPoints(r: ReportRun): SignalPoint[] {
  return r.series.flatMap((p) =>
    Object.entries(p.sink?.values ?? {}).flatMap(([key, value]) =>
      SINK_SIGNALS.test(key) && Number.isFinite(value)
        ? [{ elapsedS: p.elapsedS, signal: key, series: `${p.sink!.name} ${key}`, value }]
        : [],
    ),
  );
}

/** Lines that are not 0 throughout, and the names of those that are. */
function split(points: SignalPoint[]): { drawn: SignalPoint[]; zero: string[] } {
  const nonZero = new Set(points.filter((p) => p.value !== 0).map((p) => p.series));
  return {
    drawn: points.filter((p) => nonZero.has(p.series)),
    zero: [...new Set(points.map((p) => p.series))].filter((s) => !nonZero.has(s)),
  };
}

function panels(title: string, subtitle: string, points: SignalPoint[]): TopLevelSpec | null {
  if (points.length === 0) return null;
  const split0 = split(points);
  // every line at 0: drawn as it is (a flat 0 is the finding), else the lines at 0 are named, not drawn
  const drawn = split0.drawn.length ? split0.drawn : points;
  const zeroText =
    split0.drawn.length && split0.zero.length ? `at 0 throughout: ${split0.zero.join(", ")}` : "";
  const signals = [...new Set(drawn.map((p) => p.signal))];
  return {
    title: { text: title, subtitle: [subtitle, ...(zeroText ? [zeroText] : [])] },
    vconcat: signals.map((signal) => ({
      title: { text: signal, fontSize: 12, fontWeight: "normal" },
      width: 480,
      height: 90,
      data: { values: drawn.filter((p) => p.signal === signal) },
      mark: { type: "line", strokeWidth: 2, point: { size: 12 } },
      encoding: {
        x: { field: "elapsedS", type: "quantitative", title: "seconds since load started" },
        y: { field: "value", type: "quantitative", title: null },
        color: {
          field: "series",
          type: "nominal",
          title: null,
          legend: { orient: "bottom", labelLimit: 400 },
        },
        tooltip: [
          { field: "elapsedS", format: ".1f" },
          { field: "series" },
          { field: "value", format: ",.0f" },
        ],
      },
    })),
    resolve: { scale: { color: "independent", y: "independent" } },
  } as unknown as TopLevelSpec;
}

/** The collector's flush and queue signals over time, or null when the series has none. */
export function collectorSignalsSpec(r: ReportRun): TopLevelSpec | null {
  const name = r.series.find((p) => p.collector)?.collector?.name ?? "collector";
  return panels(
    `${r.label}: ${name} flush and queue signals`,
    "as the collector reports them each sample (counters cumulative)",
    collectorPoints(r),
  );
}

/** The sink's merges over time, or null when the series has none. */
export function sinkSignalsSpec(r: ReportRun): TopLevelSpec | null {
  const name = r.series.find((p) => p.sink)?.sink?.name ?? "sink";
  return panels(
    `${r.label}: ${name} merges`,
    "as the sink's node stats report them each sample (totals cumulative)",
    sinkPoints(r),
  );
}
