// Write-up 001's query table and the mixed-mode ingest table (ui/query-table.ts) on synthetic run.json
// files (test/helpers/run-records.ts), through `compare --scenario S --stack X --metric queries`; and what compare
// says when the runs have no query phase.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareCommand } from "../../../harness/results/compare.ts";
import { renderQueryTables, sizeLabel } from "../../../ui/query-table.ts";
import type { QueryCellResult, QueryPhaseRecord } from "../../../harness/results/types.ts";
import { writeRunRecord } from "../../helpers/run-records.ts";

let root = "";
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-query-table-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const INV = "2026-12-01T10:00:00.000Z";
const cell = (
  statement: string,
  concurrency: number,
  count: number,
  rps: number,
  errors = 0,
): QueryCellResult => ({
  id: `${statement}@${concurrency}x${count}`,
  statement,
  concurrency,
  count,
  requests: concurrency * count,
  ok: concurrency * count - errors,
  errors,
  errorSamples: [],
  rows: concurrency * count,
  elapsedMs: (concurrency * count * 1000) / rps,
  requestsPerSecond: rps,
  latencyMs: { mean: 5, p50: 4, p99: rps / 10, max: 50 },
});
const phase = (tableRows: number, rps: number, extra: Partial<QueryPhaseRecord> = {}): QueryPhaseRecord => ({
  sink: "clickhouse",
  tableRows,
  cells: [cell("count", 100, 10, rps), cell("count", 10, 5000, rps * 2), cell("latest", 100, 10, rps / 2, 1)],
  ...extra,
});

describe("the query tables", () => {
  it("names table sizes as write-up 001 does", () => {
    expect([1000, 2000, 25_000, 1_100_000, 1234].map(sizeLabel)).toEqual([
      "1k",
      "2k",
      "25k",
      "1.1M",
      "1,234",
    ]);
  });

  it("prints one row per table size and statement, ordered by size, one column per concurrency × count cell, medians over the runs", async () => {
    for (const v of [100, 110, 90])
      writeRunRecord(root, {
        stack: "s",
        scenario: "ql",
        invocation: INV,
        rows: 1000,
        cell: "batch=10000,requests=110",
        query: phase(1_100_000, v / 10),
      });
    for (const v of [100, 110, 90])
      writeRunRecord(root, {
        stack: "s",
        scenario: "ql",
        invocation: INV,
        rows: 1000,
        cell: "requests=2",
        query: phase(2000, v),
      });
    const text = await compareCommand(root, { scenario: "ql", stacks: "s", metric: "queries" });
    const lines = text.split("\n").filter((l) => l.includes("requests="));
    expect(
      lines.map((l) =>
        l
          .split("│")
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    ).toEqual([
      ["requests=2", "2k", "count", "3", "100.0 (10.0)", "200.0 (20.0)", "0"],
      ["requests=2", "2k", "latest", "3", "50.0 (5.0)", "–", "3"],
      ["batch=10000,requests=110", "1.1M", "count", "3", "10.0 (1.0)", "20.0 (2.0)", "0"],
      ["batch=10000,requests=110", "1.1M", "latest", "3", "5.0 (0.5)", "–", "3"],
    ]);
    // "A × B" in this table: the query cells' axes, said in its header line; the ingest cells keep their ids
    expect(text).toMatch(/100 × 10 q\/s \(p99 ms\) .* 10 × 5000 q\/s \(p99 ms\)/);
    expect(text.split("\n")[0]).toMatch(
      /: queries\/s per query cell, concurrency × count \(concurrency: closed-loop workers, count: requests per worker\), median/,
    );
    expect(text).not.toMatch(/ingest with and without/);
    expect(
      JSON.parse(await compareCommand(root, { scenario: "ql", stacks: "s", metric: "queries", json: true })),
    ).toHaveLength(6);
  });

  it("mixed mode: the ingest's rows/s with its ratio to the cell whose queries ran after the ingest, delivery latency and queries/s", () => {
    const after = [1000, 1010, 990].map((v) =>
      writeRunRecord(root, {
        stack: "s",
        scenario: "mixed",
        invocation: INV,
        rows: v,
        cell: "during=after",
        delivery: { p50Ms: 40, p99Ms: 80 },
        query: phase(30_000, 100),
      }),
    );
    const during = [800, 808, 792].map((v) =>
      writeRunRecord(root, {
        stack: "s",
        scenario: "mixed",
        invocation: INV,
        rows: v,
        cell: "during=ingest",
        delivery: { p50Ms: 60, p99Ms: 200 },
        query: phase(24_000, 50, { during: "ingest", passes: 3 }),
      }),
    );
    // queries/s of the whole phase: requests over the cells' elapsed time (52,000 requests in 280 s after, 560 s during)
    const text = renderQueryTables("mixed on s", [...during, ...after])!;
    const ingest = text.slice(text.indexOf("ingest with and without"));
    expect(ingest).toMatch(/ratio to cell during=after, queries after the ingest/);
    const row = (c: string): string[] =>
      ingest
        .split("\n")
        .find((l) => l.startsWith(`│ ${c} `))!
        .split("│")
        .map((x) => x.trim())
        .filter(Boolean);
    expect(row("during=after")).toEqual([
      "during=after",
      "after ingest",
      "3/3",
      "1,000",
      "1.00x",
      "baseline",
      "40",
      "80",
      "185.7",
      "3",
    ]);
    const d = row("during=ingest");
    expect(d.slice(0, 5)).toEqual(["during=ingest", "during ingest", "3/3", "800", "0.80x"]);
    expect(d[5]).toMatch(/^\[0\.\d\d, 0\.\d\d\] slower$/);
    expect(d.slice(6)).toEqual(["60", "200", "92.9", "3"]);
    // the query table names each cell's query mode
    expect(text).toMatch(/during=ingest .*during ingest .*count/);
    expect(
      renderQueryTables("none", [writeRunRecord(root, { stack: "t", invocation: INV, rows: 5 })]),
    ).toBeNull();
  });

  it("says that runs without a query phase have none, not only that no cell is in common", async () => {
    for (const v of [1000, 1010, 990])
      writeRunRecord(root, { stack: "s", scenario: "plain-a", invocation: INV, rows: v });
    for (const v of [1000, 1010, 990])
      writeRunRecord(root, { stack: "s", scenario: "plain-b", invocation: INV, rows: v });
    const both = await compareCommand(root, { scenarios: "plain-a,plain-b", stacks: "s", metric: "queries" });
    expect(both).toMatch(
      /no query phase in either side: their runs have no `query` in run.json .* --metric rows/,
    );
    expect(both).not.toMatch(/no cell in common/);
    const one = await compareCommand(root, { scenarios: "ql,plain-a", stacks: "s", metric: "queries" });
    expect(one).toMatch(/no query phase in plain-a@s: its runs have no `query`/);
    await expect(
      compareCommand(root, { scenario: "plain-a", stacks: "s", metric: "queries" }),
    ).rejects.toMatchObject({
      code: "E_NO_QUERY_PHASE",
      message: expect.stringMatching(
        /plain-a on s: the latest invocation's 3 runs have no query phase .* use --metric rows/,
      ),
    });
    // with a query phase on both sides but different cells, it is still "no cell in common"
    expect(await compareCommand(root, { scenarios: "ql,mixed", stacks: "s", metric: "queries" })).toMatch(
      /no cell in common/,
    );
  });
});
