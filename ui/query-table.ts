/**
 * Write-up 001's query table and the mixed-mode table (docs/write-ups.md; docs/design.md, "Query load"), from the
 * run.json records of one scenario on one stack: what `bench` prints after a scenario with a `query` phase and what
 * `compare --scenario S --stack X --metric queries` prints from the results.
 *
 * - Query table: one row per matrix cell and statement, ordered by the rows in the table, one column per
 *   concurrency × count cell (001's "100×10", printed "100 × 10"): the median queries/s over the cell's runs, with the
 *   median p99 in ms;
 *   then the errors summed over the runs (a wrong answer is one). Every run with a query phase counts (a failed check
 *   such as `query.errors: 0` still measured its queries); runs without one are left out.
 * - Ingest table (when some cell's queries ran during the ingest, `query.during: ingest`): one row per cell with its
 *   query mode, the median ingest rows/s and delivery p50/p99 (Summary.rowsPerSecond, Summary.deliveryLatency), the
 *   queries/s of the whole phase (requests over the cells' elapsed time) and errors, and the rows/s ratio of each
 *   cell to the first cell whose queries ran after the ingest (ingest without query load; printed first), with the percentile
 *   bootstrap interval of harness/stats/compare.ts compareSamples.
 */
import Table from "cli-table3";
import { compareSamples } from "../harness/stats/compare.ts";
import { quantile } from "../harness/stats/descriptive.ts";
import { cellSort } from "../harness/results/caps.ts";
import { ciCell, fix, int } from "../harness/results/format.ts";
import { queryAxesHeading, queryCellLabel } from "./cell-axes.ts";
import type { RunRecord } from "../harness/results/types.ts";

/** Median of the finite values, null when there is none. */
function median(values: readonly (number | null | undefined)[]): number | null {
  const v = values.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  return v.length ? quantile(v, 0.5) : null;
}

/** "1.1M", "25k", "1,234": a table size as write-up 001 names it. */
export function sizeLabel(rows: number): string {
  if (rows >= 1_000_000 && rows % 100_000 === 0) return `${rows / 1_000_000}M`;
  if (rows >= 1000 && rows % 1000 === 0) return `${rows / 1000}k`;
  return rows.toLocaleString("en-US");
}

/** A column key "100x10" back to its cell. */
function queryCellOf(col: string): { concurrency: number; count: number } {
  const [concurrency, count] = col.split("x").map(Number);
  return { concurrency: concurrency!, count: count! };
}

/** The runs' query mode: "during ingest" or "after ingest". */
function modeOf(runs: readonly RunRecord[]): string {
  return runs.some((r) => r.query?.during === "ingest") ? "during ingest" : "after ingest";
}

/**
 * The query table (and, with a query phase during the ingest, the ingest table) of `runs`, one scenario on one stack;
 * null when no run has a query phase.
 */
export function renderQueryTables(title: string, runs: readonly RunRecord[]): string | null {
  const withQuery = runs.filter((r) => r.query && r.query.cells.length > 0);
  if (withQuery.length === 0) return null;
  const byCell = new Map<string, RunRecord[]>();
  for (const r of withQuery) byCell.set(r.cell, [...(byCell.get(r.cell) ?? []), r]);
  const tableRows = (rs: readonly RunRecord[]): number => median(rs.map((r) => r.query!.tableRows)) ?? 0;
  const cells = [...byCell.entries()].sort(
    ([a, ra], [b, rb]) => tableRows(ra) - tableRows(rb) || cellSort(a, b),
  );
  // query cells (concurrency × count) in the scenario's order, statements in theirs; the ingest's matrix cells keep
  // their ids ("batch=10000,requests=110"), so that "A × B" in this table means the query cells' axes only
  const columns: string[] = [];
  const statements: string[] = [];
  for (const r of withQuery)
    for (const c of r.query!.cells) {
      const col = `${c.concurrency}x${c.count}`;
      if (!columns.includes(col)) columns.push(col);
      if (!statements.includes(c.statement)) statements.push(c.statement);
    }
  const anyMixed = withQuery.some((r) => r.query!.during === "ingest");
  const head = [
    "cell",
    "table rows",
    ...(anyMixed ? ["queries"] : []),
    "statement",
    "runs",
    ...columns.map((c) => `${queryCellLabel(queryCellOf(c))} q/s (p99 ms)`),
    "errors",
  ];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    colAligns: head.map((h) => (["cell", "statement", "queries"].includes(h) ? "left" : "right")),
  });
  for (const [cell, rs] of cells) {
    for (const st of statements) {
      const of = (col: string) =>
        rs
          .map((r) => r.query!.cells.find((c) => c.statement === st && `${c.concurrency}x${c.count}` === col))
          .filter((c) => c !== undefined);
      if (columns.every((col) => of(col).length === 0)) continue;
      const errors = columns.reduce((n, col) => n + of(col).reduce((m, c) => m + c.errors, 0), 0);
      const runsWith = new Set(
        columns.flatMap((col) =>
          rs
            .filter((r) =>
              r.query!.cells.some((c) => c.statement === st && `${c.concurrency}x${c.count}` === col),
            )
            .map((r) => r.runId),
        ),
      ).size;
      table.push([
        cell,
        sizeLabel(tableRows(rs)),
        ...(anyMixed ? [modeOf(rs)] : []),
        st,
        String(runsWith),
        ...columns.map((col) => {
          const cs = of(col);
          if (cs.length === 0) return "–";
          return `${fix(median(cs.map((c) => c.requestsPerSecond)), 1)} (${fix(median(cs.map((c) => c.latencyMs.p99)), 1)})`;
        }),
        int(errors),
      ]);
    }
  }
  let out = `${title}: queries/s per query cell, ${queryAxesHeading()}, median over the runs, p99 latency in ms; a wrong answer is an error\n${table.toString()}`;
  if (anyMixed) out += `\n${renderIngestTable(cells)}`;
  return out;
}

/** The ingest table of mixed mode (see the module comment). */
function renderIngestTable(cells: Array<[string, RunRecord[]]>): string {
  const baseline = cells.find(([, rs]) => modeOf(rs) === "after ingest");
  const rowsOf = (rs: readonly RunRecord[]): number[] =>
    rs
      .map((r) => r.summary?.rowsPerSecond)
      .filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  const delivery = (rs: readonly RunRecord[], k: "p50Ms" | "p99Ms"): number | null =>
    median(
      rs.map((r) => {
        const d = r.summary?.deliveryLatency;
        return d && !("unavailable" in d) ? d[k] : null;
      }),
    );
  const head = [
    "cell",
    "queries",
    "runs",
    "ingest rows/s",
    "ratio",
    "90 % CI",
    "delivery p50 ms",
    "delivery p99 ms",
    "queries/s",
    "query errors",
  ];
  const table = new Table({
    head,
    style: { head: [], border: [] },
    colAligns: head.map((h) => (["cell", "queries", "90 % CI"].includes(h) ? "left" : "right")),
  });
  // the baseline (ingest without queries) first, then the others in the query table's order
  for (const [cell, rs] of baseline ? [baseline, ...cells.filter((c) => c !== baseline)] : cells) {
    const isBase = baseline !== undefined && baseline[0] === cell;
    const cmp =
      baseline && !isBase && rowsOf(baseline[1]).length && rowsOf(rs).length
        ? compareSamples(rowsOf(baseline[1]), rowsOf(rs), { noiseFloor: null })
        : null;
    const requests = rs.reduce((n, r) => n + r.query!.cells.reduce((m, c) => m + c.requests, 0), 0);
    const elapsed = rs.reduce((n, r) => n + r.query!.cells.reduce((m, c) => m + c.elapsedMs, 0), 0);
    const errors = rs.reduce((n, r) => n + r.query!.cells.reduce((m, c) => m + c.errors, 0), 0);
    table.push([
      cell,
      modeOf(rs),
      `${rowsOf(rs).length}/${rs.length}`,
      int(median(rowsOf(rs))),
      isBase ? "1.00x" : fix(cmp?.ratio ?? null, 2, "x"),
      isBase ? "baseline" : ciCell(cmp, false),
      fix(delivery(rs, "p50Ms"), 0),
      fix(delivery(rs, "p99Ms"), 0),
      fix(elapsed > 0 ? (requests * 1000) / elapsed : null, 1),
      int(errors),
    ]);
  }
  return `ingest with and without the query load (rows/s ratio to ${baseline ? `cell ${baseline[0]}, queries after the ingest` : "– (no cell ran its queries after the ingest)"}; delivery = stored_at − sent_at at the sink)\n${table.toString()}`;
}
