/**
 * A sweep's curve, one chart per stack that measured several cells: the median rows/s per cell (line) with every run
 * as a point and the runs' range as a bar, the best cell, the knee and the first cell that saturates marked (as
 * ui/bench-table.ts sweepOf finds them for the table after a bench: one rule, never two); beneath, each cell's
 * rows/s against the previous cell's, with its bootstrap interval (harness/stats/compare.ts compareSamples, as the
 * knee rests on it): the knee is the last cell before that interval reaches 1 (with one run a cell, before a rise of
 * less than DEFAULT_MIN_CHANGE, the dashed rule).
 */
import type { TopLevelSpec } from "vega-lite";
import type { StackRow } from "../../results/across-stacks.ts";
import { rowsPerSecondOf } from "../../results/caps.ts";
import { compareSamples, DEFAULT_MIN_CHANGE } from "../../stats/compare.ts";
import { sweepOf, type Sweep } from "../../../ui/bench-table.ts";
import type { ScenarioReport } from "../data.ts";

/** One cell of the curve: median, the runs' range, its marks, and its step from the previous cell. */
export interface SweepCell {
  cell: string;
  median: number;
  min: number;
  max: number;
  runs: number;
  /** "best", "knee", "saturates", comma-joined; "" for none */
  mark: string;
  /** median ÷ the previous cell's median, with its interval (null: first cell, or fewer than 2 runs a side) */
  step: number | null;
  stepLow: number | null;
  stepHigh: number | null;
}

/** One stack's curve (exported for the tests: what the chart charts). */
export function sweepCells(rows: readonly StackRow[]): { sweep: Sweep; cells: SweepCell[] } {
  const sweep = sweepOf(rows);
  const measured = rows.filter((r) => sweep.cells.includes(r.cell));
  const cells = measured.map((r, i): SweepCell => {
    const xs = rowsPerSecondOf(r.measured);
    const prev = measured[i - 1];
    const c = prev ? compareSamples(rowsPerSecondOf(prev.measured), xs) : null;
    return {
      cell: r.cell,
      median: r.medianRowsPerSecond,
      min: Math.min(...xs),
      max: Math.max(...xs),
      runs: xs.length,
      mark: [
        sweep.best?.cell === r.cell ? "best" : "",
        sweep.knees.some((k) => k.cell === r.cell) ? "knee" : "",
        sweep.saturates?.cell === r.cell ? "saturates" : "",
      ]
        .filter(Boolean)
        .join(", "),
      step: c && Number.isFinite(c.ratio) ? c.ratio : null,
      stepLow: c?.ci?.[0] ?? null,
      stepHigh: c?.ci?.[1] ?? null,
    };
  });
  return { sweep, cells };
}

/** The stacks of the scenario that measured at least two cells, each with its rows in cell order. */
export function sweptStacks(s: ScenarioReport): Array<{ stack: string; rows: StackRow[] }> {
  if (!s.sweep) return [];
  return s.stacks
    .map((stack) => ({ stack, rows: s.rows.filter((r) => r.stack === stack) }))
    .filter((x) => x.rows.filter((r) => r.measured.length > 0).length >= 2);
}

/** The spec for one stack's rows, or null when fewer than two cells were measured. */
export function sweepSpec(scenario: string, stack: string, rows: readonly StackRow[]): TopLevelSpec | null {
  const { sweep, cells } = sweepCells(rows);
  if (cells.length < 2) return null;
  const points = rows.flatMap((r) =>
    r.measured.map((run) => ({ cell: r.cell, rowsPerSecond: run.summary!.rowsPerSecond, run: run.runId })),
  );
  const order = cells.map((c) => c.cell);
  // one domain for both panels (the lower one has no first cell), labels long enough for "key=value,key=value"
  const x = {
    field: "cell",
    type: "ordinal",
    sort: order,
    scale: { domain: order },
    title: "cell",
    axis: {
      labelAngle: order.reduce((n, c) => n + c.length, 0) * 7 > 560 ? -30 : 0,
      labelLimit: 220,
    },
  };
  const marks = cells.filter((c) => c.mark);
  const said = [
    sweep.best ? `best ${sweep.best.cell}` : null,
    ...(sweep.knees.some((k) => k.cell)
      ? sweep.knees.filter((k) => k.cell).map((k) => `knee ${k.cell}${k.axis ? ` along ${k.axis}` : ""}`)
      : ["no knee"]),
    sweep.saturates ? `saturates from ${sweep.saturates.cell}` : "no cell saturates",
  ].filter(Boolean);
  const single = sweep.singleRuns;
  return {
    title: {
      text: `${scenario} on ${stack}: rows/s per cell (${said.join(", ")})`,
      subtitle: single
        ? "one run a cell: no interval; the knee compares single runs"
        : "line: median; points: runs; bars: the runs' range; below: ratio to the previous cell, 90 % interval",
    },
    vconcat: [
      {
        width: 560,
        height: 240,
        layer: [
          {
            data: { values: marks },
            mark: { type: "rule", color: "#d62728", strokeDash: [4, 3] },
            encoding: { x },
          },
          {
            data: { values: cells },
            mark: { type: "rule", color: "#888", strokeWidth: 2 },
            encoding: { x, y: { field: "min", type: "quantitative" }, y2: { field: "max" } },
          },
          {
            data: { values: cells },
            mark: { type: "line", color: "#4c78a8", strokeWidth: 2 },
            encoding: {
              x,
              y: { field: "median", type: "quantitative", title: "rows/s (median)" },
            },
          },
          {
            data: { values: points },
            mark: { type: "point", filled: true, size: 45, color: "#4c78a8", opacity: 0.8 },
            encoding: {
              x,
              y: { field: "rowsPerSecond", type: "quantitative" },
              tooltip: [{ field: "cell" }, { field: "run" }, { field: "rowsPerSecond", format: ",.0f" }],
            },
          },
          {
            data: { values: marks },
            mark: { type: "text", color: "#d62728", dy: -12, fontSize: 11, fontWeight: "bold" },
            encoding: { x, y: { field: "max", type: "quantitative" }, text: { field: "mark" } },
          },
        ],
      },
      {
        width: 560,
        height: 120,
        layer: [
          {
            data: { values: [{ y: 1 }, ...(single ? [{ y: 1 + DEFAULT_MIN_CHANGE }] : [])] },
            mark: { type: "rule", color: "#888" },
            encoding: {
              y: { field: "y", type: "quantitative" },
              strokeDash: { condition: { test: "datum.y > 1", value: [4, 3] }, value: [1, 0] },
            },
          },
          {
            data: { values: cells.filter((c) => c.stepLow !== null) },
            mark: { type: "rule", color: "#4c78a8", strokeWidth: 2 },
            encoding: { x, y: { field: "stepLow", type: "quantitative" }, y2: { field: "stepHigh" } },
          },
          {
            data: { values: cells.filter((c) => c.step !== null) },
            mark: { type: "point", filled: true, size: 45, color: "#4c78a8" },
            encoding: {
              x,
              y: {
                field: "step",
                type: "quantitative",
                title: "× previous cell",
                scale: { zero: false },
              },
              tooltip: [
                { field: "cell" },
                { field: "step", format: ".3f" },
                { field: "stepLow", format: ".3f" },
                { field: "stepHigh", format: ".3f" },
              ],
            },
          },
        ],
      },
    ],
  } as unknown as TopLevelSpec;
}
