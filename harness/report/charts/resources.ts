/**
 * The sink host over time (series.jsonl `hosts.sink`): CPU used in cores (with the applied cap as a rule), the
 * share of CFS periods throttled, and its network and disk write rates; the run's fault steps as vertical markers
 * (./timeline.ts stepMarkerLayers).
 */
import type { TopLevelSpec } from "vega-lite";
import { sinkCaps } from "../../results/caps.ts";
import type { ReportRun } from "../data.ts";
import { stepMarkerLayers, stepMarks } from "./timeline.ts";

const HOST = "sink";

/** The spec, or null when the series has no sample of the sink host. */
export function resourcesSpec(r: ReportRun): TopLevelSpec | null {
  const points = r.series.filter((p) => p.hosts?.[HOST] !== undefined);
  if (points.length === 0) return null;
  const cpu = points.map((p) => ({
    elapsedS: p.elapsedS,
    phase: p.phase,
    cores: p.hosts[HOST]!.cpuCores,
    throttled: p.hosts[HOST]!.throttledShare,
  }));
  const io = points.flatMap((p) => {
    const h = p.hosts[HOST]!;
    return [
      {
        elapsedS: p.elapsedS,
        measure: "net Mbit/s",
        value: (Math.max(h.netRxBytesPerSec ?? 0, h.netTxBytesPerSec ?? 0) * 8) / 1e6,
      },
      { elapsedS: p.elapsedS, measure: "disk write MiB/s", value: (h.ioWriteBytesPerSec ?? 0) / 2 ** 20 },
    ];
  });
  const cap = sinkCaps(r.run).cores;
  const x = {
    field: "elapsedS",
    type: "quantitative",
    title: "seconds since load started",
    scale: { zero: true },
  };
  const hasThrottle = cpu.some((c) => c.throttled !== null);
  const marks = stepMarks(r.run);
  return {
    title: `${r.label}: sink CPU, throttling, IO`,
    vconcat: [
      {
        width: 480,
        height: 120,
        layer: [
          {
            data: { values: cpu },
            mark: { type: "line", color: "#54a24b", strokeWidth: 2, point: { size: 14, color: "#54a24b" } },
            encoding: {
              x,
              y: {
                field: "cores",
                type: "quantitative",
                title: cap === null ? "CPU, cores" : "CPU, cores (rule: cap)",
              },
              tooltip: [
                { field: "elapsedS", format: ".1f" },
                { field: "cores", format: ".2f" },
              ],
            },
          },
          ...(cap === null
            ? []
            : [
                {
                  data: { values: [{ cap }] },
                  mark: { type: "rule", color: "#333", strokeDash: [4, 3] },
                  encoding: { y: { field: "cap", type: "quantitative" } },
                },
              ]),
          ...stepMarkerLayers(marks, true),
        ],
      },
      ...(hasThrottle
        ? [
            {
              width: 480,
              height: 100,
              data: { values: cpu },
              transform: [{ filter: "isValid(datum.throttled)" }],
              mark: {
                type: "line",
                color: "#f58518",
                strokeWidth: 2,
                point: { size: 14, color: "#f58518" },
                interpolate: "step-before",
              },
              encoding: {
                x,
                y: {
                  field: "throttled",
                  type: "quantitative",
                  title: "throttled share",
                  axis: { format: "%" },
                  scale: { domain: [0, 1] },
                },
              },
            },
          ]
        : []),
      {
        width: 480,
        height: 120,
        layer: [
          {
            data: { values: io },
            mark: { type: "line", strokeWidth: 2, point: { size: 12 } },
            encoding: {
              x,
              y: { field: "value", type: "quantitative", title: "rate" },
              color: {
                field: "measure",
                type: "nominal",
                title: null,
                scale: { range: ["#72b7b2", "#b279a2"] },
              },
            },
          },
          ...stepMarkerLayers(marks, false),
        ],
      },
    ],
    resolve: { scale: { color: "independent" } },
  } as TopLevelSpec;
}
