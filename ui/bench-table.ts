/**
 * The table that ends every `ingestbench bench`: the comparison across stacks (harness/results/across-stacks.ts
 * compareStacks rows, the columns of harness/results/columns.ts), and on one stack across its cells the sweep: which
 * cell is best, where rows/s stops rising (the knee) and the first cell that saturates (the saturation verdict,
 * harness/runner/saturation.ts). The default keeps to BENCH_TABLE_WIDTH columns by choosing its columns (columns.ts
 * fitColumns) and names the others; `wide` shows all of them.
 */
import { DEFAULT_MIN_CHANGE, compareSamples } from "../harness/stats/compare.ts";
import type { StackRow } from "../harness/results/across-stacks.ts";
import { rowsPerSecondOf } from "../harness/results/caps.ts";
import {
  columnContext,
  stackColumns,
  terminalColumns,
  type StackColumn,
} from "../harness/results/columns.ts";
import { measuredOnLine } from "../harness/results/format.ts";
import { rowMachine } from "../harness/results/across-stacks.ts";
import { cellAxes, pairsOf } from "./cell-axes.ts";
import { clip, int, pct, plural } from "./format.ts";
import { compactTable } from "./table.ts";
import { costFallbackLines } from "./comparison.ts";

/** The widest the default table and its lines are, in columns. */
export const BENCH_TABLE_WIDTH = 100;

/**
 * The width the table after a bench fits: on a terminal (`stream.isTTY`) its columns, at most BENCH_TABLE_WIDTH, so
 * that a terminal narrower than 100 columns gets fewer columns rather than wrapped rows; BENCH_TABLE_WIDTH when the
 * output is not a terminal (a pipe, a file, a CI log).
 */
export function benchTableWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  const cols = stream.columns;
  return stream.isTTY && typeof cols === "number" && cols > 0
    ? Math.min(cols, BENCH_TABLE_WIDTH)
    : BENCH_TABLE_WIDTH;
}

/** Where one stack's sweep over its cells stands (sweepOf). */
export interface Sweep {
  /** the cell with the highest median rows/s, null when no cell was measured */
  best: { cell: string; rowsPerSecond: number } | null;
  /**
   * the last cell before rows/s stops rising (the next cell's is not higher: its ratio's interval reaches 1, or with
   * one run a cell, it rises less than DEFAULT_MIN_CHANGE); null when rows/s still rises at the last cell
   */
  knee: string | null;
  /**
   * the knee along each line of the matrix: one line (axis null) over every cell in order for a one-axis sweep; for a
   * matrix of two or more axes, one line per axis through the best cell (the other axes at its values), since cell
   * order alone runs across axes and a dip from "100 × 4" to "200 × 1" says nothing
   */
  knees: Knee[];
  /** true when every cell had one measured run: the knee compares single runs, without an interval */
  singleRuns: boolean;
  /** the first cell (in cell order) where a measured run was saturated or rejecting, with its verdict */
  saturates: { cell: string; label: string; runs: number; of: number } | null;
  /** the cells measured, in order */
  cells: string[];
}

/** The knee along one line of cells (Sweep.knees). */
export interface Knee {
  /** the axis that varies along the line, null for a one-axis sweep's cell order */
  axis: string | null;
  /** the other axes' values held fixed, "workers=2" (empty for a one-axis sweep) */
  fixed: string;
  /** the last cell before rows/s stops rising, null when it still rises at the line's last cell */
  cell: string | null;
  /** the line's last cell */
  last: string;
}

/** Whether rows/s rises from cell `a` to cell `b`: beyond the interval with replicates, else by at least 5 %. */
function rises(a: StackRow, b: StackRow): boolean {
  if (a.measured.length >= 2 && b.measured.length >= 2) {
    const c = compareSamples(rowsPerSecondOf(a.measured), rowsPerSecondOf(b.measured));
    return c.ci !== null && c.ci[0] > 1;
  }
  return b.medianRowsPerSecond > a.medianRowsPerSecond * (1 + DEFAULT_MIN_CHANGE);
}

/** One stack's sweep from its comparison rows (one row per cell, in cell order: compareStacks with one stack). */
export function sweepOf(rows: readonly StackRow[]): Sweep {
  const measured = rows.filter((r) => r.measured.length > 0 && Number.isFinite(r.medianRowsPerSecond));
  const best = measured.reduce<StackRow | null>(
    (b, r) => (b === null || r.medianRowsPerSecond > b.medianRowsPerSecond ? r : b),
    null,
  );
  const knees = best ? kneeLines(measured, best.cell) : [];
  const knee = knees.length === 1 ? knees[0]!.cell : (knees.find((k) => k.cell !== null)?.cell ?? null);
  let saturates: Sweep["saturates"] = null;
  for (const r of measured) {
    const hit = r.measured.filter((x) =>
      ["saturated", "rejecting"].includes(x.summary?.saturation?.state ?? ""),
    );
    if (hit.length > 0) {
      saturates = {
        cell: r.cell,
        label: hit[0]!.summary!.saturation!.label,
        runs: hit.length,
        of: r.measured.length,
      };
      break;
    }
  }
  return {
    best: best ? { cell: best.cell, rowsPerSecond: best.medianRowsPerSecond } : null,
    knee,
    knees,
    singleRuns: measured.length > 0 && measured.every((r) => r.measured.length < 2),
    saturates,
    cells: measured.map((r) => r.cell),
  };
}

/** The last cell of `line` before rows/s stops rising; null when it rises to the end. */
function kneeOf(line: readonly StackRow[]): string | null {
  for (let i = 0; i + 1 < line.length; i++) if (!rises(line[i]!, line[i + 1]!)) return line[i]!.cell;
  return null;
}

/** The lines a knee is looked for along: cell order for one axis; per axis, through the best cell, for several. */
function kneeLines(measured: readonly StackRow[], bestCell: string): Knee[] {
  const axes = cellAxes(measured.map((r) => r.cell));
  if (axes === null) return [{ axis: null, fixed: "", cell: kneeOf(measured), last: measured.at(-1)!.cell }];
  const bestPairs = pairsOf(bestCell)!;
  return axes.axes.flatMap((axis, i): Knee[] => {
    const line = measured.filter((r) =>
      pairsOf(r.cell)!.every(([, v], j) => j === i || v === bestPairs[j]![1]),
    );
    if (line.length < 2) return [];
    const fixed = bestPairs
      .filter((_, j) => j !== i)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    return [{ axis, fixed, cell: kneeOf(line), last: line.at(-1)!.cell }];
  });
}

/** "knee 1000 × 2 (rows/s stops rising after it)", along an axis when the matrix has several. */
function kneeText(k: Knee, name: (cell: string) => string): string {
  const along = k.axis === null ? "" : ` along ${k.axis} (${k.fixed.replace(/=/g, " ")})`;
  return k.cell === null
    ? `no knee${along}: rows/s still rises at ${name(k.last)}`
    : `knee${along} ${name(k.cell)} (rows/s stops rising after it)`;
}

/**
 * The sweep in lines under BENCH_TABLE_WIDTH: best cell, knee (and on what it rests), first cell that saturates.
 * `name` prints a cell id as the table names it (ui/cell-axes.ts: "200 × 10"; the id by default).
 */
export function sweepLines(
  s: Sweep,
  name: (cell: string) => string = (c) => c,
  width = BENCH_TABLE_WIDTH,
): string[] {
  if (!s.best) return ["no cell was measured: no best cell, no knee"];
  const knees = s.knees.map((k) => kneeText(k, name));
  const best = `best ${name(s.best.cell)} at ${int(s.best.rowsPerSecond)} rows/s`;
  const lines = [
    ...(knees.length === 1
      ? [clip(`${best}; ${knees[0]}`, width)]
      : [clip(best, width), ...knees.map((k) => clip(k, width))]),
    clip(
      s.saturates
        ? `first cell that saturates: ${name(s.saturates.cell)}, ${s.saturates.label} in ${s.saturates.runs}/${s.saturates.of} ${s.saturates.of === 1 ? "run" : "runs"}`
        : "no cell saturates (the saturation verdict of every run: steady, oscillating or undetermined)",
      width,
    ),
  ];
  if (s.singleRuns && s.cells.length > 1)
    lines.push(
      clip(
        `one run a cell: the knee compares single runs (a rise under ${pct(DEFAULT_MIN_CHANGE)} is none)`,
        width,
      ),
    );
  return lines;
}

/** The mark column of a sweep: "best", "knee", "saturates" (comma-joined when a cell is several). */
function markOf(s: Sweep, cell: string): string {
  return [
    s.best?.cell === cell ? "best" : null,
    s.knees.some((k) => k.cell === cell) ? "knee" : null,
    s.saturates?.cell === cell ? "saturates" : null,
  ]
    .filter(Boolean)
    .join(", ");
}

export interface BenchTableOptions {
  /** every column (compare --wide), not fitted to the width */
  wide?: boolean;
  /** the width the default table fits (default BENCH_TABLE_WIDTH; a terminal's: benchTableWidth) */
  width?: number;
}

/**
 * The table after a bench: a title naming what the ratio refers to, the machine line, with one stack and several cells
 * the sweep's lines, the table (compact: no rule between rows), and a line naming the columns not shown. With one
 * stack and several cells the table has a mark column ("best", "knee", "saturates").
 */
export function benchTable(scenario: string, rows: readonly StackRow[], o: BenchTableOptions = {}): string {
  const width = o.width ?? BENCH_TABLE_WIDTH;
  const ctx = columnContext(rows);
  const stacks = [...new Set(rows.map((r) => r.stack))];
  const sweep = stacks.length === 1 && ctx.withCell ? sweepOf(rows) : null;
  const marks = sweep ? rows.map((r) => markOf(sweep, r.cell)) : null;
  const markWidth = marks ? Math.max(4, ...marks.map((m) => m.length)) + 3 : 0;
  let cols: StackColumn[];
  if (o.wide) cols = stackColumns("terminal", ctx, { wide: true });
  else cols = terminalColumns(rows, { width: width - markWidth }).shown;
  // one stack's sweep: the title names the stack, the cells are the rows
  if (sweep) cols = cols.filter((c) => c.key !== "stack");
  const shown = new Set(cols.map((c) => c.key));
  const notShown = stackColumns("terminal", ctx, { wide: true }).filter(
    (c) => !shown.has(c.key) && !(sweep && c.key === "stack"),
  );
  const head = cols.map((c) => c.header(ctx));
  const align = cols.map((c) => c.align);
  const body = rows.map((r) => cols.map((c) => c.cell(r, ctx)));
  if (marks) {
    const at = cols.findIndex((c) => c.key === "cell") + 1;
    head.splice(at, 0, "mark");
    align.splice(at, 0, "l");
    body.forEach((b, i) => b.splice(at, 0, marks[i]!));
  }
  // a sweep over two or more axes names its cells "200 × 10" under "batch × requests" (ui/cell-axes.ts)
  const name = (cell: string): string => ctx.axes?.label(cell) ?? cell;
  const ratioTo =
    rows[0]?.baselineCell !== undefined
      ? `the first cell, ${name(rows[0].baselineCell)}${ctx.axes ? ` (${ctx.axes.heading})` : ""}`
      : (rows[0]?.stack ?? "?");
  const title =
    stacks.length === 1
      ? `${scenario} on ${stacks[0]}: median rows/s of its latest runs${ctx.withCell ? `; ratio to ${ratioTo}` : ""}`
      : `${scenario}: median rows/s of each stack's latest runs; ratio to ${ratioTo}${ctx.withCell ? " (same cell)" : ""}`;
  const lines = [
    clip(title, width),
    clip(measuredOnLine(rows.map((r) => ({ label: r.stack, machine: rowMachine(r) }))), width),
    ...(sweep ? sweepLines(sweep, name, width) : []),
    ...[excludedNote(rows, scenario, width)].filter((l): l is string => l !== null),
    compactTable({ head, align, rows: body }),
  ];
  if (notShown.length)
    lines.push(
      namesLine(
        "more columns with --wide: ",
        notShown.map((c) => c.header(ctx)),
        width,
      ),
    );
  lines.push(...costFallbackLines(rows, (r) => r.stack).map((l) => clip(l, width)));
  return lines.join("\n");
}

/** `lead` and as many of `names` as fit `width`, then ", …" for the rest. */
function namesLine(lead: string, names: readonly string[], width: number): string {
  for (let k = names.length; k > 0; k--) {
    const line = `${lead}${names.slice(0, k).join(", ")}${k < names.length ? ", …" : ""}`;
    if (line.length <= width) return line;
  }
  return clip(`${lead}…`, width);
}

/** "2 runs left out of the table: ingestbench compare --scenario X says why"; null when none was. */
export function excludedNote(
  rows: readonly StackRow[],
  scenario: string,
  width = BENCH_TABLE_WIDTH,
): string | null {
  const n = rows.reduce((s, r) => s + r.excluded.length, 0);
  if (n === 0) return null;
  return clip(
    `${plural(n, "run")} left out of the table: ingestbench compare --scenario ${scenario} says why`,
    width,
  );
}
