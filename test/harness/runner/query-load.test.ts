// The query phase's answer check and table naming (harness/runner/query-load.ts), on ClickHouse TabSeparated
// answers as the HTTP interface sends them; the real server is exercised in test/e2e/clickhouse-query-load.test.ts.
import { describe, expect, it } from "vitest";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as hdr from "hdr-histogram-js";
import { latencySummaryMs } from "../../../harness/stats/latency.ts";
import {
  checkAnswer,
  checkRows,
  pgTableRef,
  queryTotals,
  resolveMaxSeq,
  runQueryPhase,
  statementText,
  tableRef,
  type QueryProgress,
} from "../../../harness/runner/query-load.ts";
import type { QueryPhase } from "../../../harness/scenario/schema.ts";
import type { QueryCellResult } from "../../../harness/results/types.ts";

describe("checkAnswer", () => {
  const count = { name: "count", sql: "SELECT count() FROM {table}", rows: 1, value: "{stored}" as const };
  it("accepts the right answer and counts its rows", () => {
    expect(checkAnswer(200, "1000\n", count, 1000)).toEqual({ rows: 1 });
    expect(checkAnswer(200, "1\ta\n2\tb\n", { name: "x", sql: "s" }, 0)).toEqual({ rows: 2 });
    expect(checkAnswer(200, "", { name: "x", sql: "s", rows: 0 }, 0)).toEqual({ rows: 0 });
    expect(checkAnswer(200, "7\tz\n", { name: "x", sql: "s", value: 7 }, 0)).toEqual({ rows: 1 });
  });
  it("makes a wrong answer an error, not a fast query", () => {
    expect(checkAnswer(200, "999\n", count, 1000)).toEqual({
      error: "wrong answer: first value 999, expected 1000 (the rows in the table)",
    });
    expect(checkAnswer(200, "1000\n1000\n", count, 1000)).toEqual({
      error: "wrong answer: 2 rows, expected 1",
    });
    expect(checkAnswer(200, "", { name: "x", sql: "s", value: 3 }, 0)).toEqual({
      error: "wrong answer: first value (no row), expected 3",
    });
  });
  it("makes a non-200 status and an exception streamed after a 200 errors", () => {
    expect(
      checkAnswer(
        500,
        "Code: 60, e.displayText() = DB::Exception: Table default.nope doesn't exist.\n",
        count,
        1,
      ),
    ).toEqual({
      error: "HTTP 500: Code: 60, e.displayText() = DB::Exception: Table default.nope doesn't exist.",
    });
    expect(
      checkAnswer(
        200,
        "1\n2\nCode: 241, e.displayText() = DB::Exception: Memory limit exceeded\n",
        { name: "x", sql: "s" },
        0,
      ),
    ).toEqual({
      error: "exception in the answer: Code: 241, e.displayText() = DB::Exception: Memory limit exceeded",
    });
  });
});

describe("checkRows (any sink's rows, e.g. PostgreSQL's through node-postgres)", () => {
  const count = { name: "count", sql: "SELECT count(*) FROM {table}", rows: 1, value: "{stored}" as const };
  it("after the ingest, {stored} is exact", () => {
    expect(checkRows([["1000"]], count, { min: 1000, max: 1000 })).toEqual({ rows: 1 });
    expect(checkRows([["999"]], count, { min: 1000, max: 1000 })).toEqual({
      error: "wrong answer: first value 999, expected 1000 (the rows in the table)",
    });
  });
  it("during the ingest, {stored} is at least the latest count: a smaller answer (a stale or empty table) is wrong", () => {
    const during = { min: 5000, max: Number.POSITIVE_INFINITY };
    expect(checkRows([["5000"]], count, during)).toEqual({ rows: 1 });
    expect(checkRows([["8000"]], count, during)).toEqual({ rows: 1 });
    expect(checkRows([["4999"]], count, during)).toEqual({
      error: "wrong answer: first value 4999, expected at least 5000 (the rows in the table)",
    });
    expect(checkRows([], count, during)).toEqual({ error: "wrong answer: 0 rows, expected 1" });
    expect(checkRows([["x"]], { ...count, rows: undefined }, during)).toEqual({
      error: "wrong answer: first value x, expected at least 5000 (the rows in the table)",
    });
  });
  it("names the PostgreSQL table quoted, schema-qualified when given", () => {
    expect(pgTableRef({})).toBe('"ib_events"');
    expect(pgTableRef({ table: "logs.t1" })).toBe('"logs"."t1"');
  });
});

describe("statementText and tableRef", () => {
  it("names the run's table, database-qualified, and appends the format", () => {
    expect(tableRef({ table: "ib_events" })).toEqual({ database: "default", ref: "default.ib_events" });
    expect(tableRef({ table: "logs.t1" })).toEqual({ database: "logs", ref: "logs.t1" });
    expect(tableRef({ database: "d" })).toEqual({ database: "d", ref: "d.ib_events" });
    expect(statementText({ name: "c", sql: "SELECT count() FROM {table};" }, "default.t")).toBe(
      "SELECT count() FROM default.t FORMAT TabSeparated",
    );
  });
});

describe("queryTotals", () => {
  it("sums requests, answers and errors over the cells (for the query.* checks)", () => {
    const cell = (requests: number, ok: number, errors: number): QueryCellResult => ({
      id: "c@1x1",
      statement: "c",
      concurrency: 1,
      count: requests,
      requests,
      ok,
      errors,
      errorSamples: [],
      rows: ok,
      elapsedMs: 1,
      requestsPerSecond: 1,
      latencyMs: { mean: 1, p50: 1, p99: 1, max: 1 },
    });
    expect(queryTotals(undefined)).toBeUndefined();
    expect(
      queryTotals({ sink: "clickhouse", tableRows: 5, cells: [cell(10, 10, 0), cell(5, 2, 3)] }),
    ).toEqual({ requests: 15, ok: 12, errors: 3 });
  });
});

describe("runQueryPhase progress (a local HTTP server answering in ClickHouse's HTTP interface format: TabSeparated over POST /; no ClickHouse here)", () => {
  it("reports each cell's start and end with done/total, errors and the time left; a wrong answer is an error in the report", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => setTimeout(() => res.end("7\n"), 2));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const reports: QueryProgress[] = [];
    try {
      const record = await runQueryPhase({
        phase: {
          statements: [
            { name: "right", sql: "SELECT count() FROM {table}", value: "{stored}" },
            { name: "wrong", sql: "SELECT count() FROM {table}", value: 8 },
          ],
          cells: [{ concurrency: 2, count: 5 }],
          timeout: { ms: 5000 } as QueryPhase["timeout"],
        },
        sink: "clickhouse",
        target: { host: "127.0.0.1", port, params: {} },
        tableRows: 7,
        onProgress: (p) => reports.push(p),
      });
      expect(record.cells.map((c) => [c.id, c.ok, c.errors])).toEqual([
        ["right@2x5", 10, 0],
        ["wrong@2x5", 0, 10],
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const ends = reports.filter((r) => r.ended);
    expect(
      ends.map((r) => [
        r.cellId,
        r.cellIndex,
        r.cells,
        r.done,
        r.total,
        r.errors,
        r.cellRemainingS,
        r.phaseRemainingS,
      ]),
    ).toEqual([
      ["right@2x5", 1, 2, 10, 10, 0, 0, expect.any(Number)],
      ["wrong@2x5", 2, 2, 10, 10, 10, 0, 0],
    ]);
    // after the first cell, the phase's estimate is the second cell's 10 requests at the mean rate so far (> 0)
    expect(ends[0]!.phaseRemainingS!).toBeGreaterThan(0);
    const starts = reports.filter((r) => r.done === 0 && !r.ended);
    expect(starts.map((r) => r.cellId)).toEqual(["right@2x5", "wrong@2x5"]);
    expect(
      reports.every((r) => r.pass === undefined && (r.queriesPerSec === null || r.queriesPerSec > 0)),
    ).toBe(true);
  });
});

describe("prepare and {maxSeq} (run and read once before the cells; a local HTTP server in ClickHouse's HTTP interface format, no ClickHouse here)", () => {
  it("is replaced in the statements that name it, leaving the others as they are", () => {
    const count = { name: "count", sql: "SELECT count() FROM {table}", rows: 1 };
    expect(
      resolveMaxSeq(
        [
          count,
          {
            name: "latest",
            sql: "SELECT seq FROM {table} WHERE seq > {maxSeq} - 10 OR seq = {maxSeq}",
            rows: 10,
          },
        ],
        999,
      ),
    ).toEqual([
      count,
      { name: "latest", sql: "SELECT seq FROM {table} WHERE seq > 999 - 10 OR seq = 999", rows: 10 },
    ]);
  });
  it("runs prepare as written, reads max(seq) once, then the cells; a failed prepare or a table without a newest seq stops the phase", async () => {
    let maxSeq = "41";
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        bodies.push(body);
        if (body.startsWith("BAD"))
          res.writeHead(500).end("Code: 62, e.displayText() = DB::Exception: Syntax error\n");
        else
          res.end(
            body.startsWith("SELECT max(seq)") ? `${maxSeq}\n` : body.startsWith("OPTIMIZE") ? "" : "41\n",
          );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const phase = (prepare?: string[]): Parameters<typeof runQueryPhase>[0] => ({
      phase: {
        prepare,
        statements: [{ name: "latest", sql: "SELECT seq FROM {table} WHERE seq > {maxSeq} - 10", rows: 1 }],
        cells: [{ concurrency: 1, count: 2 }],
        timeout: { ms: 5000 } as QueryPhase["timeout"],
      },
      sink: "clickhouse",
      target: { host: "127.0.0.1", port: (server.address() as AddressInfo).port, params: {} },
      tableRows: 42,
    });
    try {
      const record = await runQueryPhase(phase(["OPTIMIZE TABLE {table} FINAL"]));
      expect(record.cells.map((c) => [c.id, c.ok, c.errors])).toEqual([["latest@1x2", 2, 0]]);
      expect(record.prepareMs).toBeGreaterThan(0);
      expect(bodies).toEqual([
        "OPTIMIZE TABLE default.ib_events FINAL",
        "SELECT max(seq) FROM default.ib_events FORMAT TabSeparated",
        ...Array(2).fill("SELECT seq FROM default.ib_events WHERE seq > 41 - 10 FORMAT TabSeparated"),
      ]);
      await expect(runQueryPhase(phase(["BAD {table}"]))).rejects.toMatchObject({
        code: "E_QUERY_PREPARE",
        message: expect.stringContaining("query.prepare.0 (BAD {table}): HTTP 500: Code: 62"),
      });
      maxSeq = "\\N";
      await expect(runQueryPhase(phase())).rejects.toMatchObject({
        code: "E_QUERY_PREFILL",
        message: expect.stringContaining('answered "\\\\N"'),
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("Ctrl-C during prepare (a local HTTP server in ClickHouse's HTTP interface format that never answers; no ClickHouse here)", () => {
  it("ends the phase at once with the abort's reason, without waiting for the statement", async () => {
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => {
      held.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const ac = new AbortController();
    try {
      const run = runQueryPhase({
        phase: {
          prepare: ["CREATE INDEX slow"],
          statements: [{ name: "count", sql: "SELECT count() FROM {table}", rows: 1 }],
          cells: [{ concurrency: 1, count: 1 }],
          timeout: { ms: 5000 } as QueryPhase["timeout"],
        },
        sink: "clickhouse",
        target: { host: "127.0.0.1", port: (server.address() as AddressInfo).port, params: {} },
        tableRows: 1,
        signal: ac.signal,
      });
      while (held.length === 0) await new Promise((r) => setTimeout(r, 10)); // the prepare statement is in flight
      ac.abort(new Error("interrupted (SIGINT)"));
      await expect(run).rejects.toThrow("interrupted (SIGINT)");
      expect(held).toHaveLength(1); // nothing after the prepare was sent
    } finally {
      for (const r of held) r.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("latencySummaryMs", () => {
  it("holds percentiles to the max when they share the top bucket (hdr-histogram-js answers 73.599 ms for values ≤ 73.584 ms)", () => {
    const h = hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 20_000_000,
      numberOfSignificantValueDigits: 3,
    });
    for (let i = 0; i < 200; i++) h.recordValue(73_584 - (i % 3));
    expect(h.getValueAtPercentile(50)).toBeGreaterThan(h.maxValue); // the library's own answer, which the summary corrects
    const s = latencySummaryMs(h);
    expect(s).toMatchObject({ p50: 73.584, p99: 73.584, max: 73.584 });
    expect(s.mean).toBeLessThanOrEqual(s.max);
  });
});
