/**
 * The comparison across stacks as a plain table (header, aligned text cells), shared by the HTML report and the
 * Markdown summary: the report's columns of harness/results/columns.ts, the one column definition that
 * `ingestbench compare` prints from too.
 */
import { stackTable, type TextTable } from "../results/columns.ts";
import type { ExcludedRun } from "../results/eligibility.ts";
import type { FingerprintDifference } from "../results/fingerprint.ts";
import { fix, measuredOnLine } from "../results/format.ts";
import { rowMachine } from "../results/across-stacks.ts";
import type { StackRow } from "../results/across-stacks.ts";

export type { TextTable } from "../results/columns.ts";

/** The comparison rows as a table; a cell column only when there are several cells. */
export function comparisonTable(rows: StackRow[]): TextTable {
  return stackTable(rows, "report");
}

/** "stack: 1.23x faster (reason)" for every row compared with an interval. */
/** The machine(s) a scenario's figures were measured on (every number names its machine: docs/decisions/0007). */
export function scenarioMachineLine(rows: StackRow[]): string {
  return measuredOnLine(rows.map((r) => ({ label: r.stack, machine: rowMachine(r) })));
}

export function verdicts(rows: StackRow[]): string[] {
  const withCell = new Set(rows.map((r) => r.cell)).size > 1;
  return rows
    .filter((r) => r.comparison && r.comparison.ci !== null)
    .map(
      (r) =>
        `${r.stack}${withCell ? ` ${r.cell}` : ""}: ${fix(r.ratio, 2, "x")} ${r.comparison!.change === "none" ? "no change" : r.comparison!.change} (${r.comparison!.reason})`,
    );
}

/** "field: stack value; stack value" per environment difference. */
export function differenceLines(differences: FingerprintDifference[]): string[] {
  return differences.map(
    (d) =>
      `${d.kind === "version" ? "component version differs: " : ""}${d.field}: ${Object.entries(d.values)
        .map(([k, v]) => `${k} ${v}`)
        .join("; ")}`,
  );
}

/** "runId (stack, cell): reason" per run the figures left out (harness/results/eligibility.ts). */
export function excludedRunLines(excluded: ReadonlyArray<ExcludedRun>): string[] {
  return excluded.map((x) => `${x.runId} (${x.stack}, ${x.cell}): ${x.reason}`);
}
