/**
 * The columns of the comparison across stacks, defined once: the terminal table (`ingestbench compare`,
 * ui/comparison.ts) and the report's table (HTML and Markdown, harness/report/table.ts) both lay out
 * `stackTable(rows, surface)`. Each descriptor says what the column holds (key, header, unit), where its value
 * comes from in a stack's row (harness/results/across-stacks.ts StackRow, medians over the runs' run.json
 * summaries), how it is formatted (harness/results/format.ts) and on which surface it is shown.
 */
import { ConfigurationError } from "../../core/errors.ts";
import { DEFAULT_CONFIDENCE } from "../stats/bootstrap.ts";
import type { StackRow } from "./across-stacks.ts";
import { ciCell, cvCell, fix, int, ledgerCell, p99Cell, pctLabel, sig, usd } from "./format.ts";
import { cellAxes, type CellAxes } from "../../ui/cell-axes.ts";

/** Where a table is drawn: the terminal (cli-table3) or the report (HTML and Markdown). */
export type Surface = "terminal" | "report";

/** What a column's header and visibility may depend on, the same for every row of one table. */
export interface ColumnContext {
  /** several cells (a matrix): the table gets a cell column */
  withCell: boolean;
  /** confidence level of the intervals (fraction, e.g. 0.9) */
  confidence: number;
  /**
   * every row's measured runs have dollars per million rows (a price for every host): the cost column shows $/M rows,
   * else the stack's core-seconds per million rows (absent: false)
   */
  priced?: boolean;
  /**
   * the matrix's axes when every cell names the same two or more (ui/cell-axes.ts): the cell column is then headed
   * "batch × requests" and its cells read "200 × 10"; absent or null: "cell" and the ids
   */
  axes?: CellAxes | null;
}

/** One column of the comparison across stacks. */
export interface StackColumn {
  /** stable identifier ("cpuMsPer1000Rows"); unique among the columns */
  key: string;
  /** the header as printed ("CPU ms/1k rows") */
  header: (ctx: ColumnContext) => string;
  /** unit of the value in words ("rows per second"), null for labels and verdicts */
  unit: string | null;
  align: "l" | "r";
  /** the row's figure behind the column (raw, before formatting) */
  value: (row: StackRow) => unknown;
  /** the formatted cell text */
  cell: (row: StackRow, ctx: ColumnContext) => string;
  /** on which surfaces the column is shown */
  shown: Record<Surface, boolean>;
  /** shown only when this holds for the table (default: always) */
  when?: (ctx: ColumnContext) => boolean;
  /** the terminal shows it only with `compare --wide` (or when `--columns` names it); the report always */
  wide: boolean;
}

/** A column as written down: the value is typed, and `format` receives it. */
interface ColumnSpec<V> {
  key: string;
  header: string | ((ctx: ColumnContext) => string);
  unit: string | null;
  align: "l" | "r";
  value: (row: StackRow) => V;
  format: (value: V, row: StackRow, ctx: ColumnContext) => string;
  shown?: Partial<Record<Surface, boolean>>;
  when?: (ctx: ColumnContext) => boolean;
  wide?: boolean;
}

function column<V>(s: ColumnSpec<V>): StackColumn {
  const header = s.header;
  return {
    key: s.key,
    unit: s.unit,
    align: s.align,
    value: s.value,
    when: s.when,
    wide: s.wide ?? false,
    header: typeof header === "string" ? () => header : header,
    cell: (row, ctx) => s.format(s.value(row), row, ctx),
    shown: { terminal: s.shown?.terminal ?? true, report: s.shown?.report ?? true },
  };
}

/** The row a ratio refers to: the first cell when one stack sweeps a parameter, else the first stack. */
const isBaseline = (r: StackRow): boolean =>
  r.baselineCell !== undefined ? r.cell === r.baselineCell : r.stack === r.baselineStack;

/**
 * Median over the measured runs of the delivery latency p99 (Summary.deliveryLatency), ms; "n/a" when every run's
 * sink has none; null without a measured run that has one (older results).
 */
function deliveryP99(r: StackRow): number | "n/a" | null {
  const ds = r.measured.map((x) => x.summary?.deliveryLatency).filter((d) => d !== undefined);
  const values = ds
    .flatMap((d) => (!("unavailable" in d) && d.p99Ms !== null ? [d.p99Ms] : []))
    .sort((a, b) => a - b);
  if (values.length === 0) return ds.length > 0 && ds.every((d) => "unavailable" in d) ? "n/a" : null;
  const m = values.length >> 1;
  return values.length % 2 ? values[m]! : (values[m - 1]! + values[m]!) / 2;
}

/** The measured runs' saturation verdicts (Summary.saturation.label), each once, with k/n when not all runs agree. */
function verdicts(r: StackRow): string[] {
  const labels = r.measured.flatMap((x) => (x.summary?.saturation ? [x.summary.saturation.label] : []));
  const counts = new Map<string, number>();
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  return [...counts].map(([l, k]) => (k === r.measured.length ? l : `${l} ${k}/${r.measured.length}`));
}

/** The columns in table order. */
export const STACK_COLUMNS: readonly StackColumn[] = [
  column({ key: "stack", header: "stack", unit: null, align: "l", value: (r) => r.stack, format: (v) => v }),
  column({
    key: "cell",
    header: (ctx) => ctx.axes?.heading ?? "cell",
    unit: null,
    align: "l",
    value: (r) => r.cell,
    format: (v, _r, ctx) => ctx.axes?.label(v) ?? v,
    when: (ctx) => ctx.withCell,
  }),
  column({
    key: "runs",
    header: "runs",
    unit: "measured runs / runs",
    align: "r",
    value: (r) => r.measured.length,
    format: (v, r) => {
      const statuses = r.runs.filter((x) => x.status !== "ok").map((x) => x.status);
      return `${v}/${r.runs.length}${statuses.length ? ` (${statuses.join(",")})` : ""}`;
    },
  }),
  column({
    key: "rowsPerSecond",
    header: "rows/s",
    unit: "rows per second (median)",
    align: "r",
    value: (r) => r.medianRowsPerSecond,
    format: int,
  }),
  column({
    wide: true,
    key: "iqr",
    header: "IQR",
    unit: "rows per second",
    align: "r",
    value: (r) => (r.rowsPerSecond.n >= 2 ? r.rowsPerSecond.iqr : null),
    format: (v) => (v === null ? "–" : int(v)),
  }),
  column({
    key: "cv",
    header: "CV",
    unit: "percent of the median rows/s",
    align: "r",
    value: (r) => r.rowsPerSecond,
    format: cvCell,
  }),
  column({
    wide: true,
    key: "logMibPerSecond",
    header: "log MiB/s",
    unit: "MiB per second of the log lines themselves, as write-up 004 reads its file (median)",
    align: "r",
    value: (r) => r.medianLogMiBPerSecond,
    format: (v) => fix(v, 2),
  }),
  column({
    wide: true,
    key: "mibPerSecond",
    header: "wire MiB/s",
    unit: "MiB per second as encoded on the wire: framing and tracking fields included (median)",
    align: "r",
    value: (r) => r.medianMiBPerSecond,
    format: (v) => fix(v, 2),
  }),
  column({
    key: "ratio",
    header: "ratio",
    unit: "median rows/s ÷ the baseline's",
    align: "r",
    value: (r) => r.ratio,
    format: (v) => fix(v, 2, "x"),
  }),
  column({
    key: "ci",
    header: (ctx) => `${pctLabel(ctx.confidence)} CI`,
    unit: "bootstrap interval of the ratio, verdict",
    align: "l",
    value: (r) => r.comparison,
    format: (v, r) => ciCell(v, isBaseline(r)),
  }),
  column({
    key: "rowsPerSecondPerCore",
    header: "rows/s/vCPU",
    unit: "rows per second per sink core",
    align: "r",
    value: (r) => r.rowsPerSecondPerCore,
    format: int,
  }),
  column({
    wide: true,
    key: "rowsPerSecondPerGiB",
    header: "rows/s/GiB",
    unit: "rows per second per GiB of sink memory",
    align: "r",
    value: (r) => r.rowsPerSecondPerGiB,
    format: int,
  }),
  column({
    wide: true,
    key: "sinkCores",
    header: "sink cores",
    unit: "cores used by the sink",
    align: "r",
    value: (r) => r.sinkCores,
    format: (v) => fix(v, 2),
  }),
  column({
    wide: true,
    key: "cpuMsPer1000Rows",
    header: "CPU ms/1k rows",
    unit: "sink CPU milliseconds per 1000 rows",
    align: "r",
    value: (r) => r.cpuMsPer1000Rows,
    format: (v) => fix(v, 1),
  }),
  column({
    wide: true,
    key: "storageBytesPerMillionRows",
    header: "disk MiB/M rows",
    unit: "MiB on the sink's disk per million stored rows (run.json storage)",
    align: "r",
    value: (r) => r.storageBytesPerMillionRows,
    format: (v) => (v === null ? "–" : fix(v / 2 ** 20, 1)),
  }),
  column({
    wide: true,
    key: "throttled",
    header: "throttled",
    unit: "percent of CFS periods throttled",
    align: "r",
    value: (r) => r.throttledShare,
    format: (v, r) => (r.measured.length === 0 ? "–" : v === null ? "no cap" : fix(v * 100, 0, " %")),
  }),
  column({
    wide: true,
    key: "networkMbitPerSecond",
    header: "net Mbit/s",
    unit: "sink network Mbit per second",
    align: "r",
    value: (r) => r.networkMbitPerSecond,
    format: (v) => fix(v, 1),
  }),
  column({
    key: "costPerMillionRows",
    header: (ctx) => (ctx.priced ? "$/M rows" : "core-s/M rows"),
    unit: "the whole stack's cost per million rows (median): US dollars when every run has a price for every host, else CPU core-seconds of every host",
    align: "r",
    value: (r) => r.cost,
    format: (v, _r, ctx) => (ctx.priced ? usd(v.usdPerMillionRows) : sig(v.coreSecondsPerMillionRows)),
  }),
  column({
    key: "lagP99Ms",
    header: "lag p99",
    unit: "milliseconds (n = the samples it rests on; under 100, read it as the max)",
    align: "r",
    value: (r) => r.lagP99Ms,
    format: (v, r) => p99Cell(v, r.lagSamples),
  }),
  column({
    wide: true,
    key: "deliveryP99Ms",
    header: "delivery p99",
    unit: "milliseconds, stored_at − sent_at per row at the sink (median over runs; n/a: the sink keeps no stored-at)",
    align: "r",
    value: (r) => deliveryP99(r),
    format: (v) => (v === "n/a" ? v : v === null ? "–" : `${int(v)} ms`),
  }),
  column({
    wide: true,
    key: "verdict",
    header: "verdict",
    unit: null,
    align: "l",
    value: (r) => verdicts(r),
    format: (v) => v.join(", ") || "–",
  }),
  column({
    key: "bottleneck",
    header: "bottleneck",
    unit: null,
    align: "l",
    value: (r) => r.bottlenecks,
    format: (v) => v.join(", ") || "–",
  }),
  column({
    key: "flags",
    header: "flags",
    unit: null,
    align: "l",
    value: (r) => r.flags,
    // oversubscribed, partial, uncapped (≥ machine), not enforced, contended k/n (across-stacks.ts runFlags)
    format: (v) => v.join(", ") || "–",
  }),
  column({
    key: "ledger",
    header: "ledger",
    unit: "rows",
    align: "l",
    value: (r) => r,
    format: (v) => ledgerCell(v.runs.filter((r) => r.ledger).length, v),
  }),
];

/** The context of a table of these rows: a cell column with several cells; the first interval's confidence level. */
export function columnContext(rows: readonly StackRow[]): ColumnContext {
  return {
    withCell: new Set(rows.map((r) => r.cell)).size > 1,
    axes: cellAxes([...new Set(rows.map((r) => r.cell))]),
    confidence: rows.find((r) => r.comparison)?.comparison?.confidence ?? DEFAULT_CONFIDENCE,
    priced:
      rows.some((r) => r.measured.length > 0) &&
      rows.every((r) => r.measured.length === 0 || r.cost.usdPerMillionRows !== null),
  };
}

/**
 * Which columns the terminal shows: the default (every column not marked `wide`: about a dozen, readable in a
 * 160-column terminal), all of them (`wide`, as the report), or the ones named (`columns`: keys or headers,
 * case-insensitive; the stack and, with several cells, the cell column always come first).
 */
export interface ColumnChoice {
  wide?: boolean;
  columns?: readonly string[];
  /**
   * the terminal's width in characters (terminalWidth): the default table drops its lowest-priority columns
   * (FIT_PRIORITY) until it fits; --wide and --columns are shown as asked. Absent: no fitting
   */
  width?: number;
}

/**
 * The width a terminal table should fit: COLUMNS when it is a positive integer, else the stream's own width when it
 * is a terminal, else 120 (a pipe or a file: a width most readers and review tools show unwrapped).
 */
export function terminalWidth(
  stream: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const fromEnv = Number(env.COLUMNS);
  if (env.COLUMNS !== undefined && Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns;
  return DEFAULT_WIDTH;
}

/** The width fitted when the output is not a terminal and COLUMNS is unset. */
export const DEFAULT_WIDTH = 120;

/**
 * The default columns by priority, highest first, for fitting a width: the stack, the cell and rows/s always stay;
 * then the ratio, the ledger, the interval, the cost (docs/cost.md), the bottleneck, the flags, and the
 * rest.
 */
export const FIT_PRIORITY: readonly string[] = [
  "stack",
  "cell",
  "rowsPerSecond",
  "ratio",
  "ledger",
  "ci",
  "costPerMillionRows",
  "bottleneck",
  "flags",
  "runs",
  "lagP99Ms",
  "cv",
  "rowsPerSecondPerCore",
];
const ALWAYS = new Set(["stack", "cell", "rowsPerSecond"]);

/** A cli-table3 table's width: one border before each column and after the last, one space of padding on each side. */
function tableWidth(widths: readonly number[]): number {
  return widths.reduce((s, w) => s + w + 3, 1);
}

/**
 * The columns that fit `width` (cli-table3's layout, each column as wide as its widest cell or header): taken in
 * FIT_PRIORITY order while the table still fits (columns not in it last), shown in table order; the stack, the cell
 * and rows/s always. `dropped` are the columns left out, in table order.
 */
export function fitColumns(
  rows: readonly StackRow[],
  ctx: ColumnContext,
  cols: readonly StackColumn[],
  width: number,
): { shown: StackColumn[]; dropped: StackColumn[] } {
  const w = new Map(
    cols.map((c) => [
      c.key,
      Math.max([...c.header(ctx)].length, ...rows.map((r) => [...c.cell(r, ctx)].length)),
    ]),
  );
  const rank = (c: StackColumn) =>
    FIT_PRIORITY.includes(c.key) ? FIT_PRIORITY.indexOf(c.key) : FIT_PRIORITY.length;
  const keep = new Set(cols.filter((c) => ALWAYS.has(c.key)).map((c) => c.key));
  for (const c of [...cols].sort((a, b) => rank(a) - rank(b))) {
    if (keep.has(c.key)) continue;
    const widths = cols.filter((x) => keep.has(x.key) || x.key === c.key).map((x) => w.get(x.key)!);
    if (tableWidth(widths) <= width) keep.add(c.key);
  }
  return { shown: cols.filter((c) => keep.has(c.key)), dropped: cols.filter((c) => !keep.has(c.key)) };
}

/** Whether a choice asks for fitting: a width, and neither --wide nor --columns. */
const fits = (choice: ColumnChoice): choice is ColumnChoice & { width: number } =>
  choice.width !== undefined && !choice.wide && !choice.columns?.length;

/** The terminal's columns for these rows as `choice` says, fitted to its width (fitColumns), and those dropped to fit. */
export function terminalColumns(
  rows: readonly StackRow[],
  choice: ColumnChoice = {},
): { shown: StackColumn[]; dropped: StackColumn[] } {
  const ctx = columnContext(rows);
  const cols = stackColumns("terminal", ctx, choice);
  return fits(choice) ? fitColumns(rows, ctx, cols, choice.width) : { shown: cols, dropped: [] };
}

/** "rows/s" and "rowsPerSecond" both name the rows/s column. */
const names = (c: StackColumn, ctx: ColumnContext): string[] => [
  c.key.toLowerCase(),
  c.header(ctx).toLowerCase(),
];

/**
 * The columns a surface shows in a table with this context, in table order.
 * @throws ConfigurationError E_FLAG when `choice.columns` names a column that does not exist (the message lists them)
 */
export function stackColumns(surface: Surface, ctx: ColumnContext, choice: ColumnChoice = {}): StackColumn[] {
  const all = STACK_COLUMNS.filter((c) => c.shown[surface] && (c.when?.(ctx) ?? true));
  if (surface === "report" || choice.wide) return all;
  if (choice.columns?.length) {
    const wanted = choice.columns.map((w) => w.trim().toLowerCase()).filter(Boolean);
    const unknown = wanted.filter((w) => !STACK_COLUMNS.some((c) => names(c, ctx).includes(w)));
    if (unknown.length) {
      throw new ConfigurationError(
        "E_FLAG",
        `--columns: no column ${unknown.map((u) => `"${u}"`).join(", ")}; the columns are ${STACK_COLUMNS.map((c) => c.key).join(", ")}`,
        { field: "columns" },
      );
    }
    return all.filter(
      (c) => c.key === "stack" || c.key === "cell" || names(c, ctx).some((n) => wanted.includes(n)),
    );
  }
  return all.filter((c) => !c.wide);
}

/** The terminal columns left out of the default table (for its footer line), by header; not those dropped to fit a width. */
export function hiddenColumns(ctx: ColumnContext, choice: ColumnChoice = {}): string[] {
  const shown = new Set(stackColumns("terminal", ctx, choice).map((c) => c.key));
  return stackColumns("terminal", ctx, { wide: true })
    .filter((c) => !shown.has(c.key))
    .map((c) => c.header(ctx));
}

/** A table as text cells, for any renderer. */
export interface TextTable {
  head: string[];
  /** "l" or "r" per column */
  align: Array<"l" | "r">;
  rows: string[][];
  /** per column, its unit in words (null for none); absent for tables not built from column descriptors */
  units?: Array<string | null>;
  /** per column, its descriptor's key; absent as units */
  keys?: string[];
}

/** The comparison rows as a text table for a surface, from STACK_COLUMNS (the terminal's as `choice` says, fitted to its width). */
export function stackTable(
  rows: readonly StackRow[],
  surface: Surface,
  choice: ColumnChoice = {},
): Required<TextTable> {
  const ctx = columnContext(rows);
  const cols =
    surface === "terminal" ? terminalColumns(rows, choice).shown : stackColumns(surface, ctx, choice);
  return {
    keys: cols.map((c) => c.key),
    head: cols.map((c) => c.header(ctx)),
    align: cols.map((c) => c.align),
    units: cols.map((c) => c.unit),
    rows: rows.map((r) => cols.map((c) => c.cell(r, ctx))),
  };
}
