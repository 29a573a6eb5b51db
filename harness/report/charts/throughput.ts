/**
 * Throughput per stack. With a matrix: stored rows/s against the swept parameter, one line of medians per stack
 * (and per value of the other swept parameters) with every run as a point. Without a matrix: one bar per stack
 * (median rows/s of its latest runs) with every run as a tick. Only the runs the comparison used are drawn (status
 * ok, caps enforced, the stack's machine: harness/results/eligibility.ts); the report lists the others.
 */
import type { TopLevelSpec } from "vega-lite";
import { cellValues, type ScenarioReport } from "../data.ts";

const valueText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** The spec, or null when no run of the scenario was used. */
export function throughputSpec(s: ScenarioReport): TopLevelSpec | null {
  const used = new Set(s.rows.flatMap((r) => r.measured.map((m) => m.runId)));
  const measured = s.runs.filter((r) => r.run.summary !== null && used.has(r.run.runId));
  if (measured.length === 0) return null;
  const title = `${s.scenario}: stored rows/s`;
  if (s.sweep) {
    const [key, ...others] = s.sweep.keys as [string, ...string[]];
    const xs = measured.map((r) => cellValues(r.run)[key]);
    const numeric = xs.every((x) => typeof x === "number" && Number.isFinite(x));
    const positive = numeric && xs.every((x) => (x as number) > 0);
    const span = positive ? Math.max(...(xs as number[])) / Math.min(...(xs as number[])) : 1;
    const points = measured.map((r) => {
      const values = cellValues(r.run);
      const rest = others.map((k) => `${k.split(".").at(-1)}=${valueText(values[k])}`).join(",");
      return {
        x: numeric ? values[key] : valueText(values[key]),
        series: rest ? `${r.run.stack} ${rest}` : r.run.stack,
        rowsPerSecond: r.run.summary!.rowsPerSecond,
        run: r.run.runId,
        cell: r.run.cell,
      };
    });
    // legend in the order the stacks ran (the first is the baseline), then by the other swept values
    const rank = (name: string): number =>
      s.stacks.findIndex((st) => name === st || name.startsWith(`${st} `));
    const seriesOrder = [...new Set(points.map((p) => p.series))].sort(
      (a, b) => rank(a) - rank(b) || a.localeCompare(b, "en", { numeric: true }),
    );
    const x = {
      field: "x",
      type: numeric ? "quantitative" : "ordinal",
      title: key,
      ...(numeric
        ? { scale: span >= 20 ? { type: "log" } : { type: "linear", zero: false } }
        : { sort: null }),
    } as const;
    return {
      title,
      width: 560,
      height: 300,
      data: { values: points },
      encoding: { x, color: { field: "series", type: "nominal", title: "stack", sort: seriesOrder } },
      layer: [
        {
          mark: { type: "line", point: false, strokeWidth: 2 },
          encoding: {
            y: {
              aggregate: "median",
              field: "rowsPerSecond",
              type: "quantitative",
              title: "rows/s (median; points: runs)",
            },
          },
        },
        {
          mark: { type: "point", filled: true, size: 50, opacity: 0.8 },
          encoding: {
            y: { field: "rowsPerSecond", type: "quantitative" },
            tooltip: [
              { field: "series" },
              { field: "cell" },
              { field: "run" },
              { field: "rowsPerSecond", format: ",.0f" },
            ],
          },
        },
      ],
    } as TopLevelSpec;
  }
  const bars = s.rows
    .filter((r) => r.measured.length > 0)
    .map((r) => ({ stack: r.stack, rowsPerSecond: r.medianRowsPerSecond, ratio: r.ratio }));
  const ticks = measured.map((r) => ({
    stack: r.run.stack,
    rowsPerSecond: r.run.summary!.rowsPerSecond,
    run: r.run.runId,
  }));
  const order = s.stacks;
  return {
    title,
    width: { step: 110 },
    height: 280,
    layer: [
      {
        data: { values: bars },
        mark: { type: "bar", color: "#4c78a8" },
        encoding: {
          x: {
            field: "stack",
            type: "nominal",
            sort: order,
            title: "stack",
            axis: { labelAngle: order.length > 4 ? -30 : 0, labelLimit: 160 },
          },
          y: { field: "rowsPerSecond", type: "quantitative", title: "rows/s (median; ticks: runs)" },
          tooltip: [
            { field: "stack" },
            { field: "rowsPerSecond", format: ",.0f" },
            { field: "ratio", format: ".2f" },
          ],
        },
      },
      {
        data: { values: bars },
        mark: { type: "text", dy: -7, fontSize: 11 },
        encoding: {
          x: { field: "stack", type: "nominal", sort: order },
          y: { field: "rowsPerSecond", type: "quantitative" },
          text: { field: "rowsPerSecond", type: "quantitative", format: ",.0f" },
        },
      },
      {
        data: { values: ticks },
        mark: { type: "tick", color: "#222", thickness: 2 },
        encoding: {
          x: { field: "stack", type: "nominal", sort: order },
          y: { field: "rowsPerSecond", type: "quantitative" },
          tooltip: [{ field: "run" }, { field: "rowsPerSecond", format: ",.0f" }],
        },
      },
    ],
  } as TopLevelSpec;
}
