/**
 * Terminal tables of ui/ (cli-table3): a compact layout with a rule under the header and no rule between rows, so a
 * sweep of a dozen cells stays a dozen lines.
 */
import Table from "cli-table3";

/** A table as text cells (harness/results/columns.ts TextTable has the same shape). */
export interface Cells {
  head: string[];
  align: Array<"l" | "r">;
  rows: string[][];
}

/** Render `t` as a compact terminal table (no colours, no rule between rows). */
export function compactTable(t: Cells): string {
  const table = new Table({
    head: t.head,
    style: { head: [], border: [] },
    colAligns: t.align.map((a) => (a === "l" ? "left" : "right")),
  });
  for (const r of t.rows) table.push(r);
  // cli-table3 draws the same rule under the header and between rows: keep the first only
  let rules = 0;
  return table
    .toString()
    .split("\n")
    .filter((l) => !l.startsWith("├") || rules++ === 0)
    .join("\n");
}

/** The width cli-table3 gives columns this wide: a border before each and after the last, one space each side. */
export function tableWidth(widths: readonly number[]): number {
  return widths.reduce((s, w) => s + w + 3, 1);
}
