/**
 * The capacity curve of a scenario's capacity searches (results/<stack>/<scenario>.capacity/capacity.json, written by
 * `ingestbench capacity`, harness/results/capacity.ts): per stack and step, the events/s offered against those sent
 * and stored (one unit on both axes, the diagonal where stored = offered), and beside it the step's p99 latency
 * against the offered rate with the bound the search applied. Sustained steps are filled points, the others hollow.
 */
import type { TopLevelSpec } from "vega-lite";
import type { CapacityFile } from "../../results/capacity.ts";

/** The spec, or null when no stack has a stored search with a step. */
export function capacitySpec(files: readonly CapacityFile[]): TopLevelSpec | null {
  const steps = files.flatMap((f) =>
    f.result.steps.map((s) => ({
      stack: f.stack,
      step: s.index,
      offered: s.offeredPerSec,
      sent: s.sentPerSec,
      stored: s.storedPerSec,
      p99: s.deliveryP99Ms ?? s.lagP99Ms,
      result: s.ok ? "sustained" : `bound: ${s.boundBy.join(", ")}`,
      sustained: s.ok,
    })),
  );
  if (steps.length === 0) return null;
  const rates = steps
    .flatMap((s) => [
      { ...s, what: "stored", rate: s.stored },
      { ...s, what: "sent", rate: s.sent },
    ])
    .filter((s) => s.rate !== null);
  const top = Math.max(...steps.map((s) => s.offered), ...rates.map((s) => s.rate!));
  const bound = Math.max(...files.map((f) => f.bounds.p99BoundMs));
  const x = { field: "offered", type: "quantitative", title: "offered, events/s" };
  const color = { field: "stack", type: "nominal", legend: { title: "stack", orient: "bottom" } };
  const tooltip = [
    { field: "stack" },
    { field: "step" },
    { field: "offered", format: "," },
    { field: "sent", format: ",.0f" },
    { field: "stored", format: ",.0f" },
    { field: "p99", format: ",.0f" },
    { field: "result" },
  ];
  return {
    title: "capacity: offered vs sent and stored, and p99 latency, per step",
    hconcat: [
      {
        width: 320,
        height: 220,
        layer: [
          {
            data: {
              values: [
                { offered: 0, rate: 0 },
                { offered: top, rate: top },
              ],
            },
            mark: { type: "line", color: "#bbb", strokeDash: [4, 4] },
            encoding: { x, y: { field: "rate", type: "quantitative" } },
          },
          {
            data: { values: rates },
            mark: { type: "point", size: 60 },
            encoding: {
              x,
              y: { field: "rate", type: "quantitative", title: "events/s (stored ●, sent ◆)" },
              color,
              shape: {
                field: "what",
                type: "nominal",
                scale: { domain: ["stored", "sent"], range: ["circle", "diamond"] },
                legend: null,
              },
              fill: {
                condition: { test: "datum.sustained", field: "stack", type: "nominal" },
                value: "transparent",
              },
              tooltip,
            },
          },
        ],
      },
      {
        width: 320,
        height: 220,
        layer: [
          {
            data: { values: [{ p99: bound }] },
            mark: { type: "rule", color: "#e45756", strokeDash: [4, 4] },
            encoding: { y: { field: "p99", type: "quantitative" } },
          },
          {
            data: { values: steps.filter((s) => s.p99 !== null) },
            mark: { type: "point", size: 60 },
            encoding: {
              x,
              y: {
                field: "p99",
                type: "quantitative",
                title: `p99 latency, ms (bound ${bound.toLocaleString("en-US")} ms dashed)`,
              },
              color,
              fill: {
                condition: { test: "datum.sustained", field: "stack", type: "nominal" },
                value: "transparent",
              },
              tooltip,
            },
          },
        ],
      },
    ],
  } as TopLevelSpec;
}
