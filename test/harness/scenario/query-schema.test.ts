// The scenario `query` block (harness/scenario/schema.ts querySchema) through the real plugin registries
// (harness/runner/plan.ts loadScenarioFile): what it yields, and that every mistake names file:line:col and field.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";

const dir = mkdtempSync(path.join(tmpdir(), "ingestbench-query-schema-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const head = [
  "name: q",
  "event:",
  "  - { name: msg, type: string, size: 10 }",
  "generator: { clickhouse-http: { batch: 1000, requests: 1, connections: 1, rate: max, seed: 42 } }",
  'sink: { clickhouse: { version: "18.16.1" } }',
  "duration: 60s",
];
let n = 0;
const write = (lines: string[]): string => {
  const f = path.join(dir, `s${n++}.yaml`);
  writeFileSync(f, `${lines.join("\n")}\n`);
  return f;
};
const messageOf = (file: string): string => {
  try {
    loadScenarioFile(file);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${file} loaded`);
};

describe("scenario query block", () => {
  it("loads the statements, cells and timeout into every cell's plan (timeout defaults to 10s)", () => {
    const f = write([
      ...head,
      "query:",
      "  statements:",
      '    - { name: count, sql: "SELECT count() FROM {table}", rows: 1, value: "{stored}" }',
      "  cells: [ { concurrency: 10, count: 50 } ]",
    ]);
    const [plan] = planCells(loadScenarioFile(f), f, { replicates: 1 });
    expect(plan!.query).toEqual({
      statements: [{ name: "count", sql: "SELECT count() FROM {table}", rows: 1, value: "{stored}" }],
      cells: [{ concurrency: 10, count: 50 }],
      timeout: { ms: 10_000, text: "10s" },
      during: "after",
    });
    expect(planCells(loadScenarioFile(write(head)), "x", { replicates: 1 })[0]!.query).toBeUndefined();
  });

  it("loads scenarios/clickhouse-query-load.yaml and postgres-query-load.yaml: write-up 001's six table sizes and three cells", () => {
    for (const [name, gen] of [
      ["clickhouse-query-load", "clickhouse-http"],
      ["postgres-query-load", "pg-copy"],
    ] as const) {
      const f = path.resolve(import.meta.dirname, `../../../scenarios/${name}.yaml`);
      const plans = planCells(loadScenarioFile(f), f, { replicates: 1 });
      const rows = plans
        .map((p) => (p.generator.config.batch as number) * (p.generator.config.requests as number))
        .sort((a, b) => a - b);
      expect(rows).toEqual([1000, 2000, 10_000, 25_000, 50_000, 1_100_000]);
      for (const p of plans) {
        expect(p.generator.name).toBe(gen);
        expect(p.query!.cells).toEqual([
          { concurrency: 100, count: 10 },
          { concurrency: 10, count: 5000 },
          { concurrency: 50, count: 50 },
        ]);
        expect(p.query!.during).toBe("after");
      }
    }
  });

  it("varies query.during in a matrix (scenarios/postgres-mixed-load.yaml: queries after vs during the ingest) and names a bad value", () => {
    const f = path.resolve(import.meta.dirname, "../../../scenarios/postgres-mixed-load.yaml");
    const plans = planCells(loadScenarioFile(f), f, { replicates: 1 });
    expect(plans.map((p) => [p.cell, p.query!.during]).sort()).toEqual([
      ["during=after", "after"],
      ["during=ingest", "ingest"],
    ]);
    const g = write([
      ...head,
      "query:",
      '  statements: [ { name: c, sql: "SELECT 1" } ]',
      "  cells: [ { concurrency: 1, count: 1 } ]",
      "  during: always",
    ]);
    expect(messageOf(g)).toMatch(
      new RegExp(
        `${g}:10:\\d+: query\\.during: during is "after" \\(once the ingest is stored; default\\) or "ingest"`,
      ),
    );
  });

  it("names file:line:col and the field of each mistake", () => {
    const f = write([
      ...head,
      "query:",
      "  statements:",
      '    - { name: count, sql: "SELECT 1 FORMAT JSON", rowz: 1 }',
      '    - { name: count, sql: "SELECT 2", value: "{rows}" }',
      "  cells: [ { concurrency: 0, count: 50 }, { concurrency: 1000, count: 5000 } ]",
      "  timeout: 0s",
    ]);
    const m = messageOf(f);
    expect(m).toContain(`${f}:9:27: query.statements.0.sql: leave out the FORMAT clause`);
    expect(m).toContain(`${f}:9:51: query.statements.0.rowz: unknown key "rowz"`);
    expect(m).toMatch(new RegExp(`${f}:10:\\d+: query\\.statements\\.1\\.value`));
    expect(m).toMatch(
      new RegExp(`${f}:11:\\d+: query\\.cells\\.0\\.concurrency: number must be greater than or equal to 1`),
    );
    expect(m).toMatch(
      new RegExp(`${f}:11:\\d+: query\\.cells\\.1: concurrency × count is at most 1000000 requests`),
    );
    expect(m).toMatch(new RegExp(`${f}:12:\\d+: query\\.timeout: query timeout must be more than 0`));
    // statement names are unique (checked once the block is otherwise valid)
    const g = write([
      ...head,
      "query:",
      "  statements:",
      '    - { name: count, sql: "SELECT 1" }',
      '    - { name: count, sql: "SELECT 2" }',
      "  cells: [ { concurrency: 1, count: 1 } ]",
    ]);
    expect(messageOf(g)).toMatch(
      new RegExp(
        `${g}:10:\\d+: query\\.statements\\.1\\.name: duplicate statement "count" \\(also statements\\.0\\)`,
      ),
    );
  });

  it("refuses a query phase on a sink it cannot query, and an empty one", () => {
    const es = head.map((l) =>
      l.startsWith("generator")
        ? "generator: { es-bulk: { batch: 1000, connections: 1, rate: max, index: logs, seed: 42 } }"
        : l.startsWith("sink")
          ? 'sink: { elasticsearch: { version: "8.15.3" } }'
          : l,
    );
    const m = messageOf(
      write([
        ...es,
        "query:",
        '  statements: [ { name: c, sql: "SELECT 1" } ]',
        "  cells: [ { concurrency: 1, count: 1 } ]",
      ]),
    );
    expect(m).toMatch(
      /:8:3: query: a query phase runs against clickhouse, postgres sinks; this scenario's sink is "elasticsearch"/,
    );
    const e = messageOf(write([...head, "query: { statements: [], cells: [] }"]));
    expect(e).toMatch(/query\.statements: declare at least one statement/);
    expect(e).toMatch(/query\.cells: declare at least one concurrency × count cell/);
  });
});
