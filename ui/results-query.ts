/**
 * `ingestbench results query`'s table: a DuckDB query result (harness/results/query.ts queryResults) as a terminal
 * table, numeric columns right-aligned, with a row count.
 */
import Table from "cli-table3";
import type { QueryResult } from "../harness/results/query.ts";

/** A cell of the terminal table: numbers with thousands separators (up to 3 decimals), objects as JSON, null as "NULL". */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number")
    return Number.isInteger(v)
      ? v.toLocaleString("en-US")
      : v.toLocaleString("en-US", { maximumFractionDigits: 3 });
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** A query result as a terminal table (cli-table3), numeric columns right-aligned, with a row count. */
export function renderQueryResult(result: QueryResult): string {
  const numeric = result.types.map((t) =>
    /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/.test(
      t,
    ),
  );
  const table = new Table({
    head: result.columns,
    style: { head: [], border: [] },
    colAligns: numeric.map((n) => (n ? "right" : "left")),
  });
  for (const row of result.rows) table.push(result.columns.map((c) => cellText(row[c])));
  return `${table.toString()}\n${result.rows.length} row${result.rows.length === 1 ? "" : "s"}`;
}
