/**
 * Terminal rendering (cli-table3) of the comparisons (harness/results/compare.ts compares, this file prints): across stacks, with the columns of
 * harness/results/columns.ts (the same the report shows), across runs on one stack, across scenarios, and across the
 * variants of an application under test (write-up 003's table); then the verdicts, the
 * environment differences and the runs left out with their reasons (harness/results/eligibility.ts).
 */
import Table from "cli-table3";
import { DEFAULT_CONFIDENCE } from "../harness/stats/bootstrap.ts";
import type { CellSide, RunsComparison } from "../harness/results/across-runs.ts";
import type { ScenarioItemSide, ScenariosComparison } from "../harness/results/across-scenarios.ts";
import { rowMachine, type StackRow } from "../harness/results/across-stacks.ts";
import {
  VARIANT_SOURCES,
  variantsHeading,
  variantsTextTable,
  type VariantsComparison,
} from "../harness/results/across-variants.ts";
import {
  columnContext,
  DEFAULT_WIDTH,
  hiddenColumns,
  stackTable,
  terminalColumns,
  type ColumnChoice,
} from "../harness/results/columns.ts";
import {
  describeDifference,
  groupFingerprint,
  stackDifferences,
  type FingerprintDifference,
} from "../harness/results/fingerprint.ts";
import {
  ciCell,
  cvCell,
  fix,
  int,
  ledgerCell,
  machineKeyLine,
  measuredOnLine,
  pctLabel,
  verdictWord,
  type MachineFields,
} from "../harness/results/format.ts";
import { pct } from "./format.ts";
import { excludedLines, type ExcludedRun } from "../harness/results/eligibility.ts";
import { AA_SUFFIX } from "../harness/results/noise-floor.ts";

/** "\nexcluded runs (N, not used in any figure):\n  runId (cell, invocation): reason"; "" when none was left out. */
export function excludedBlock(list: readonly ExcludedRun[]): string {
  if (list.length === 0) return "";
  return `\nexcluded runs (${list.length}, not used in any figure above):\n${excludedLines(list)
    .map((l) => `  ${l}`)
    .join("\n")}`;
}

/** "\nenvironment differences (…):\n  field: a x; b y" with "!! " before version differences; "" when there are none. */
function differencesBlock(differences: FingerprintDifference[]): string {
  if (differences.length === 0) return "";
  return (
    `\nenvironment differences (${differences.some((d) => d.kind === "version") ? "component versions differ: compared with --force" : "listed for the record"}):\n` +
    differences.map((d) => `  ${d.kind === "version" ? "!! " : ""}${describeDifference(d)}`).join("\n")
  );
}

/**
 * Render stack rows as a terminal table (cli-table3) with the terminal's columns of harness/results/columns.ts:
 * runs, rows/s with IQR and CV ("erratic" above the threshold), MiB/s, ratio with its interval ("n=1" without one),
 * rows/s per vCPU and per GiB ("–" when uncapped), CPU, throttling, network, lag, bottleneck and ledger; a cell
 * column when there are several cells; then the verdicts and the environment differences between the stacks.
 * By default the terminal shows the columns not marked `wide` (columns.ts ColumnChoice), with a line naming the
 * others; `choice.wide` shows all of them, `choice.columns` the ones named. With `choice.width` the default table
 * leaves out its lowest-priority columns until it fits (columns.ts fitColumns), and a line names them.
 */
export function renderComparison(scenario: string, rows: StackRow[], choice: ColumnChoice = {}): string {
  const ctx = columnContext(rows);
  const { withCell } = ctx;
  // a matrix over two or more axes names its cells "200 × 10" under "batch × requests" (ui/cell-axes.ts)
  const name = (cell: string): string => ctx.axes?.label(cell) ?? cell;
  const t = stackTable(rows, "terminal", choice);
  const hidden = hiddenColumns(ctx, choice);
  const droppedColumns = terminalColumns(rows, choice).dropped;
  const dropped = droppedColumns.map((c) => c.header(ctx));
  // the bottleneck and the flags say what bound a figure and what it cannot be taken for (oversubscribed, partial
  // caps, contended): left out of the table, they are listed below it, never only hidden
  const belowLines = (["bottleneck", "flags"] as const)
    .filter((k) => droppedColumns.some((c) => c.key === k))
    .flatMap((k) => {
      const values = (r: StackRow): string[] => (k === "flags" ? r.flags : r.bottlenecks);
      const per = rows
        .filter((r) => values(r).length)
        .map((r) => `  ${r.stack}${withCell ? ` ${name(r.cell)}` : ""}: ${values(r).join(", ")}`);
      return per.length ? [`${k} (the column left out above):`, ...per] : [];
    });
  const unpriced = costFallbackLines(rows, (r) => `${r.stack}${withCell ? ` ${name(r.cell)}` : ""}`);
  const table = new Table({
    head: t.head,
    style: { head: [], border: [] },
    colAligns: t.align.map((a) => (a === "l" ? "left" : "right")),
  });
  for (const r of t.rows) table.push(r);
  const verdicts = rows
    .filter((r) => r.comparison && r.comparison.ci !== null)
    .map(
      (r) =>
        `  ${r.stack}${withCell ? ` ${name(r.cell)}` : ""}: ${fix(r.ratio, 2, "x")} ${verdictWord(r.comparison!)} (${r.comparison!.reason})`,
    );
  const ratioTo =
    rows[0]?.baselineCell !== undefined
      ? `the first cell, ${name(rows[0].baselineCell)}${ctx.axes ? ` (${ctx.axes.heading})` : ""}`
      : `${rows[0]?.stack ?? "?"}${withCell ? " (same cell)" : ""}`;
  return (
    `${scenario}: median over each stack's latest runs; ratio to ${ratioTo}\n` +
    `${measuredOnLine(rows.map((r) => ({ label: r.stack, machine: rowMachine(r) })))}\n${table.toString()}` +
    (hidden.length
      ? `\nnot shown: ${hidden.join(", ")} (--wide for all, or --columns with keys or headers; all are in --json and the report)`
      : "") +
    (dropped.length
      ? `\nleft out to fit ${choice.width} columns (COLUMNS, else the terminal's width, else ${DEFAULT_WIDTH}): ${dropped.join(", ")} (set COLUMNS wider, or use --wide or --columns)`
      : "") +
    (belowLines.length ? `\n${belowLines.join("\n")}` : "") +
    (unpriced.length ? `\n${unpriced.join("\n")}` : "") +
    (verdicts.length ? `\nverdicts:\n${verdicts.join("\n")}` : "") +
    differencesBlock(stackDifferences(rows)) +
    excludedBlock(rows.flatMap((r) => r.excluded ?? []))
  );
}

/**
 * Render an across-runs comparison: one table row per cell and group (baseline first) with runs, rows/s, IQR, CV,
 * ratio to the baseline, interval and verdict, per-vCPU and per-GiB figures and the ledger; then the selections,
 * the count of significant changes, and the environment differences.
 */
export function renderRunsComparison(c: RunsComparison): string {
  const confidence =
    c.cells.flatMap((x) => x.contenders).find((x) => x.comparison)?.comparison?.confidence ??
    DEFAULT_CONFIDENCE;
  const head = [
    "cell",
    "runs of",
    "runs",
    "rows/s",
    "IQR",
    "CV",
    "log MiB/s",
    "wire MiB/s",
    "ratio",
    `${pctLabel(confidence)} CI`,
    "rows/s/vCPU",
    "rows/s/GiB",
    "ledger",
  ];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    colAligns: head.map((h) =>
      ["cell", "runs of", "ledger", `${pctLabel(confidence)} CI`].includes(h) ? "left" : "right",
    ),
  });
  const sideCells = (s: CellSide): string[] => [
    `${s.measured}/${s.runs}`,
    int(s.rowsPerSecond.median),
    s.rowsPerSecond.n >= 2 ? int(s.rowsPerSecond.iqr) : "–",
    cvCell(s.rowsPerSecond),
    fix(s.medianLogMiBPerSecond, 2),
    fix(s.medianMiBPerSecond, 2),
  ];
  const notes: string[] = [];
  for (const cell of c.cells) {
    const b = cell.baseline;
    table.push([
      cell.cell,
      `${b.label} (baseline)`,
      ...sideCells(b),
      b.measured ? "1.00x" : "–",
      "baseline",
      int(b.rowsPerSecondPerCore),
      int(b.rowsPerSecondPerGiB),
      ledgerCell(b.measured, b),
    ]);
    for (const k of cell.contenders) {
      table.push([
        cell.cell,
        k.label,
        ...sideCells(k),
        fix(k.comparison?.ratio ?? null, 2, "x"),
        ciCell(k.comparison, false),
        int(k.rowsPerSecondPerCore),
        int(k.rowsPerSecondPerGiB),
        ledgerCell(k.measured, k),
      ]);
      if (k.reason)
        notes.push(
          `  ${cell.cell} ${k.label}: ${k.comparison && k.comparison.change !== "none" ? `${k.comparison.change}, ` : ""}${k.reason}`,
        );
    }
  }
  const groups = [c.baseline, ...c.contenders].map(
    (g) =>
      `  ${g.label}: ${g.runIds.length} runs, invocation${g.invocations.length > 1 ? "s" : ""} ${g.invocations.join(", ")}`,
  );
  return (
    `${c.scenario} on ${c.stack}: runs compared with the baseline "${c.baseline.label}", per cell\n${groups.join("\n")}\n` +
    `${measuredOnLine([c.baseline, ...c.contenders].map((g) => ({ label: g.label, machine: g.machine })))}\n${table.toString()}` +
    (notes.length ? `\nverdicts:\n${notes.join("\n")}` : "") +
    `\nsignificant changes: ${c.significant.slower} slower, ${c.significant.faster} faster${c.inconclusive ? `; ${c.inconclusive} inconclusive (fewer than 3 measured runs on a side)` : ""}` +
    (Object.keys(c.noiseFloors).length
      ? `\nA/A noise floors applied (results/${c.stack}/${c.scenario}${AA_SUFFIX}/noise-floor.json): ${Object.entries(
          c.noiseFloors,
        )
          .map(([cell, f]) => `${cell} ±${pct(f, 1)}`)
          .join(", ")}`
      : "") +
    differencesBlock(c.differences) +
    excludedBlock(c.excluded ?? [])
  );
}

/** Why a comparison across scenarios has no row: sides without a query phase (metric queries), else no common cell. */
function noItems(c: ScenariosComparison): string {
  const without = c.withoutQueryPhase ?? [];
  if (without.length === 0) return "no cell in common: nothing to compare";
  const all = without.length === c.sides.length;
  return (
    `no query phase in ${all ? (without.length === 2 ? "either side" : "any side") : without.join(", ")}: ${all ? "their" : without.length === 1 ? "its" : "their"} runs have no \`query\` in run.json (the scenario declares no query phase), so --metric queries has nothing to compare; ` +
    "compare their ingest with --metric rows (the default), or run a scenario with a query phase (scenarios/clickhouse-query-load.yaml, scenarios/postgres-query-load.yaml)"
  );
}

/**
 * Render a comparison across scenarios (harness/results/across-scenarios.ts): one table row per compared item and
 * side (baseline first) with runs used/taken, the median rows/s or requests/s, IQR, CV, ratio to the baseline with its
 * interval and verdict, and the ledger (metric rows) or the query errors (metric queries); then the sides, cells no
 * other side has, the verdicts, the environment differences and the runs left out with their reasons.
 */
export function renderScenariosComparison(c: ScenariosComparison): string {
  const confidence =
    c.items.flatMap((x) => x.contenders).find((x) => x.comparison)?.comparison?.confidence ??
    DEFAULT_CONFIDENCE;
  const unit = c.metric === "rows" ? "rows/s" : "queries/s";
  const ci = `${pctLabel(confidence)} CI`;
  const head = [
    c.metric === "rows" ? "cell" : "cell / query",
    "side",
    "cell of side",
    "runs",
    unit,
    "IQR",
    "CV",
    "ratio",
    ci,
    c.metric === "rows" ? "ledger" : "errors",
  ];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    colAligns: head.map((h) =>
      ["cell", "cell / query", "side", "cell of side", "ledger", ci].includes(h) ? "left" : "right",
    ),
  });
  const sideCells = (s: ScenarioItemSide): string[] => [
    `${s.measured}/${s.runs}`,
    c.metric === "rows" ? int(s.values.median) : fix(s.values.median, 1),
    s.values.n >= 2 ? fix(s.values.iqr, c.metric === "rows" ? 0 : 1) : "–",
    cvCell(s.values),
  ];
  const last = (s: ScenarioItemSide): string =>
    c.metric === "rows" ? ledgerCell(s.measured, s.ledger) : int(s.queryErrors ?? null);
  const notes: string[] = [];
  for (const item of c.items) {
    const b = item.baseline;
    table.push([
      item.item,
      `${b.label} (baseline)`,
      b.cell,
      ...sideCells(b),
      b.measured ? "1.00x" : "–",
      "baseline",
      last(b),
    ]);
    for (const k of item.contenders) {
      table.push([
        item.item,
        k.label,
        k.cell,
        ...sideCells(k),
        fix(k.comparison?.ratio ?? null, 2, "x"),
        ciCell(k.comparison, false),
        last(k),
      ]);
      if (k.reason)
        notes.push(
          `  ${item.item} ${k.label}: ${k.comparison && k.comparison.change !== "none" ? `${k.comparison.change}, ` : ""}${k.reason}`,
        );
    }
  }
  const sides = c.sides.map(
    (s, i) =>
      `  ${s.label}${i === 0 ? " (baseline)" : ""}: ${s.runIds.length} runs${s.invocation ? `, invocation ${s.invocation}` : ""}`,
  );
  return (
    `${unit} across scenarios, each side's latest complete invocation; ratio to ${c.sides[0]?.label ?? "?"}\n${sides.join("\n")}\n` +
    (c.machine ? `${machineKeyLine(c.machine)}\n` : "") +
    (c.items.length ? table.toString() : noItems(c)) +
    (c.chosenCells?.length
      ? `\n${c.chosenCells.map((x) => `${x.label}: compared by its ${x.why === "best" ? "best cell" : "named cell"} ${x.cell}${x.why === "best" ? " (highest median; --cell <id> names another)" : ""}`).join("\n")}`
      : "") +
    (c.unmatched.length
      ? `\nnot compared (no matching cell on another side): ${c.unmatched.map((u) => `${u.label} ${u.item}`).join(", ")}`
      : "") +
    (notes.length ? `\nverdicts:\n${notes.join("\n")}` : "") +
    (c.components.length
      ? `\ncomponents each side runs (compared on purpose):\n${c.components
          .filter((d) => d.field.endsWith(".running"))
          .map((d) => `  ${describeDifference(d)}`)
          .join("\n")}`
      : "") +
    differencesBlock(c.differences) +
    excludedBlock(c.excluded)
  );
}

/**
 * Write-up 003's table (harness/results/across-variants.ts variantsTextTable) for the terminal, with its heading, the
 * machine, where each figure comes from and the runs left out.
 */
export function renderVariantsComparison(c: VariantsComparison): string {
  const t = variantsTextTable(c);
  const table = new Table({
    head: t.head,
    style: { head: [], border: [] },
    colAligns: t.align.map((a) => (a === "r" ? "right" : "left")),
  });
  for (const r of t.rows) table.push(r);
  return (
    `${variantsHeading(c)}\n` +
    (c.machine ? `${machineKeyLine(c.machine)}\n` : "") +
    table.toString() +
    `\n${VARIANT_SOURCES}` +
    excludedBlock(c.excluded)
  );
}

/**
 * Why the cost column fell back to core-seconds when some compared rows have dollars and others not: one line per
 * row without (its runs' Summary.cost.noPrice, e.g. "sink: no pricePerHour in the stack file"); none otherwise.
 */
export function costFallbackLines(rows: readonly StackRow[], label: (r: StackRow) => string): string[] {
  const priced = rows.some((r) => r.cost.usdPerMillionRows !== null);
  const without = rows.filter((r) => r.measured.length > 0 && r.cost.usdPerMillionRows === null);
  if (!priced || without.length === 0) return [];
  return [
    "cost in core-s/M rows: not every stack has a price for every host",
    ...without.map((r) => `  ${label(r)}: ${r.cost.noPrice ?? "no price recorded"}`),
  ];
}
