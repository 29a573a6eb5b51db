import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { findResultFiles, queryResults } from "../../../harness/results/query.ts";
import { renderQueryResult } from "../../../ui/results-query.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { writeSyntheticResults, writeSyntheticRun } from "../report/fixtures.ts";

const projectRoot = path.resolve(import.meta.dirname, "../../..");
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
    cwd: projectRoot,
    encoding: "utf8",
    timeout: 60_000,
  });

let root = "";
let results = "";
let plainRuns: RunRecord[] = [];
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-query-"));
  results = path.join(root, "results");
  ({ plainRuns } = writeSyntheticResults(results));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("results query (DuckDB over run.json and series.jsonl)", () => {
  it("refuses a results directory that does not exist instead of answering zero rows", async () => {
    const err = await queryResults(
      path.join(tmpdir(), "ib-no-such-results-dir"),
      "SELECT count(*) FROM runs",
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as ConfigurationError).code).toBe("E_NO_RESULTS");
  });

  it("finds every run directory's files", async () => {
    const f = await findResultFiles(results);
    expect(f.runs).toHaveLength(12 + 4);
    expect(f.series).toHaveLength(12 + 4);
  });

  it("reads run.json fields as columns and structs", async () => {
    const r = await queryResults(
      results,
      "SELECT stack, summary.rowsPerSecond AS rps FROM runs WHERE scenario = 'plain' ORDER BY 2",
    );
    expect(r.columns).toEqual(["stack", "rps"]);
    expect(r.types).toEqual(["VARCHAR", "DOUBLE"]);
    expect(r.rows).toEqual([
      { stack: "small", rps: 1 },
      { stack: "small", rps: 10_000 },
      { stack: "medium", rps: 30_000 },
      { stack: "large", rps: 90_000 },
    ]);
  });

  it("gives integers as numbers, nested structs as objects, and the run directory", async () => {
    const small = plainRuns[0]!;
    const r = await queryResults(
      results,
      `SELECT ledger.lost, ledger.sent, ledger, limits.sink.applied.cfsQuotaUs AS quota, dir FROM runs WHERE runId = '${small.runId}'`,
    );
    expect(r.rows).toHaveLength(1);
    const row = r.rows[0]!;
    expect(row.lost).toBe(5);
    expect(row.sent).toBe(small.ledger!.sent);
    expect(row.quota).toBe(25000);
    expect(row.ledger).toMatchObject({ lost: 5, duplicated: 2, missingRanges: [[0, 10, 14]] });
    expect(row.dir).toBe(path.join(results, "small", "plain", small.runId));
  });

  it("exposes series lines with stack, scenario and runId from the path, joinable with runs", async () => {
    const r = await queryResults(
      results,
      `
      SELECT s.stack, s.scenario, count(*) AS windows, count(s.rowsPerSec) AS rated, max(s.hosts.sink.throttledShare) AS thr,
             any_value(r.summary.rowsPerSecond) AS rps
      FROM series s JOIN runs r USING (runId)
      WHERE s.scenario = 'plain' AND r.invocation = '2026-11-29T10:00:00.000Z'
      GROUP BY ALL ORDER BY rps`,
    );
    expect(r.rows).toEqual([
      { stack: "small", scenario: "plain", windows: 8, rated: 7, thr: 0.5, rps: 10_000 },
      { stack: "medium", scenario: "plain", windows: 8, rated: 7, thr: 0.5, rps: 30_000 },
      { stack: "large", scenario: "plain", windows: 8, rated: 7, thr: 0.5, rps: 90_000 },
    ]);
    const phases = await queryResults(
      results,
      "SELECT phase, count(*) AS n FROM series WHERE scenario = 'sweep' GROUP BY phase ORDER BY phase",
    );
    expect(phases.rows).toEqual([
      { phase: "drain", n: 24 },
      { phase: "measure", n: 96 },
      { phase: "warmup", n: 24 },
    ]);
  });

  it("renders a table with a row count", async () => {
    const text = renderQueryResult(
      await queryResults(
        results,
        "SELECT stack, summary.rowsPerSecond AS rps FROM runs WHERE scenario = 'plain' ORDER BY 2 DESC LIMIT 1",
      ),
    );
    expect(text).toMatch(/│ large +│ +90,000 │/);
    expect(text.endsWith("1 row")).toBe(true);
  });

  it("gives empty views over an empty results directory", async () => {
    const empty = path.join(root, "empty");
    mkdirSync(empty);
    const r = await queryResults(
      empty,
      "SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM series) AS series",
    );
    expect(r.rows).toEqual([{ runs: 0, series: 0 }]);
  });

  it("turns a bad statement into a configuration error naming the views", async () => {
    const err = await queryResults(results, "SELECT nope FROM runs").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as ConfigurationError).code).toBe("E_QUERY");
    expect((err as Error).message).toMatch(/nope/);
    expect((err as Error).message).toMatch(/views: runs/);
  });
});

describe("results query on damaged results", () => {
  it("leaves out a run.json that does not parse and a truncated last series line", async () => {
    const dir = path.join(root, "damaged");
    const ok = writeSyntheticRun(dir, {
      stack: "s",
      scenario: "q",
      invocation: "2026-11-29T10:00:00.000Z",
      rowsPerSecond: 5,
      points: 6,
    });
    appendFileSync(
      path.join(dir, "s", "q", ok.runId, "series.jsonl"),
      '{"t":1795987104792.961,"elapsedS":7.01,"pha',
    );
    mkdirSync(path.join(dir, "s", "q", "20261129T100500Z-badbad"), { recursive: true });
    writeFileSync(path.join(dir, "s", "q", "20261129T100500Z-badbad", "run.json"), '{"status":');
    const r = await queryResults(
      dir,
      "SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM series) AS windows",
    );
    expect(r.rows).toEqual([{ runs: 1, windows: 6 }]);
    expect(r.skipped).toHaveLength(1);
    expect(r.skipped[0]).toContain("badbad");
  });
});

describe("ingestbench results query (command line)", () => {
  it("prints a table, or JSON with --json", () => {
    const sql =
      "SELECT stack, summary.rowsPerSecond AS rps FROM runs WHERE scenario = 'plain' AND invocation = '2026-11-29T10:00:00.000Z' ORDER BY 2";
    const json = cli("results", "query", "--results", results, "--json", sql);
    expect(json.stderr).toBe("");
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { stack: "small", rps: 10000 },
      { stack: "medium", rps: 30000 },
      { stack: "large", rps: 90000 },
    ]);
    const table = cli("results", "query", "-r", results, sql);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/│ medium +│ +30,000 │/);
    expect(table.stdout.trim().endsWith("3 rows")).toBe(true);
  });

  it("exits 2 with DuckDB's message on a bad statement", () => {
    const r = cli("results", "query", "-r", results, "SELECT FROM WHERE");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/query failed: Parser Error/);
  });
});
