// A real run of scenarios/clickhouse-query-load.yaml's smallest table (1,000 rows: one 1000-row insert) on
// local-2-cores: the real ClickHouse 18.16.1 in the sink's cgroup and namespace is filled by the clickhouse-http
// generator, and once the ledger has every seq the query phase runs the scenario's statements at its concurrency ×
// count cells over HTTP. Asserts what the run records (requests, answers, errors, rows returned), never rates; a
// statement whose declared answer is wrong must come out as errors on every request, not as fast queries.
import { describe, expect, it } from "vitest";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";

describe("clickhouse-query-load on local-2-cores (real ClickHouse 18.16.1, real cgroups and namespaces)", () => {
  it("runs every statement at every cell after an exact prefill, counts each request, and counts a wrong answer as an error", async () => {
    const plan = scenarioPlan("clickhouse-query-load.yaml", { cell: "requests=1" });
    const query = plan.query!;
    // the scenario's cells, made smaller (the test asserts counts, not rates), plus a statement with a wrong answer
    plan.query = {
      ...query,
      cells: [
        { concurrency: 10, count: 20 },
        { concurrency: 50, count: 4 },
      ],
      statements: [
        ...query.statements,
        { name: "wrong", sql: "SELECT count() FROM {table}", rows: 1, value: 999 },
      ],
    };
    const run = newBenchRun("local-2-cores", plan);
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.ledger).toMatchObject({ sent: 1000, stored: 1000, lost: 0, duplicated: 0 });
    const q = record.query!;
    expect(q).toMatchObject({ sink: "clickhouse", tableRows: 1000 });
    expect(q.cells.map((c) => c.id)).toEqual([
      "count@10x20",
      "count@50x4",
      "latest@10x20",
      "latest@50x4",
      "by-gen@10x20",
      "by-gen@50x4",
      "wrong@10x20",
      "wrong@50x4",
    ]);
    for (const c of q.cells) {
      expect(c.requests).toBe(c.concurrency * c.count);
      expect(c.requests).toBe(200);
      expect(c.latencyMs.p50).toBeGreaterThan(0);
      expect(c.latencyMs.p99).toBeGreaterThanOrEqual(c.latencyMs.p50);
      expect(c.latencyMs.max).toBeGreaterThanOrEqual(c.latencyMs.p99);
      if (c.statement === "wrong") {
        expect(c).toMatchObject({ ok: 0, errors: 200, rows: 0 });
        expect(c.errorSamples[0]).toBe("wrong answer: first value 1000, expected 999");
      } else {
        expect(c).toMatchObject({ ok: 200, errors: 0, errorSamples: [] });
      }
    }
    // rows returned: count and by-gen one row per answer, latest ten
    expect(q.cells.filter((c) => c.statement === "latest").map((c) => c.rows)).toEqual([2000, 2000]);
    expect(q.cells.filter((c) => c.statement === "count").map((c) => c.rows)).toEqual([200, 200]);
    // the scenario's check query.errors: 0 fails the run on the wrong statement's 400 errors
    expect(record.checks.find((c) => c.check === "query.errors")).toMatchObject({ ok: false, actual: 400 });
    expect(record.status).toBe("failed");
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
    console.log(
      `clickhouse-query-load (1,000 rows) on local-2-cores: ${q.cells.map((c) => `${c.id} ${c.requestsPerSecond.toFixed(0)} q/s p99 ${c.latencyMs.p99.toFixed(1)} ms`).join("; ")}`,
    );
  }, 120_000);
});
