// Real runs of the PostgreSQL query phase on local-2-cores (real PostgreSQL 18.4 in the sink's cgroup and namespace):
// scenarios/postgres-query-load.yaml's smallest table (1,000 rows: one 1000-row COPY), queried once the ledger has
// every seq, and scenarios/postgres-mixed-load.yaml's during=ingest cell, queried while pg-copy loads the table.
// Asserts what the runs record (requests, answers, errors, rows returned, ledgers), never rates; a statement whose
// declared answer is wrong must come out as errors on every request, not as fast queries.
import { describe, expect, it } from "vitest";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { renderQueryTables } from "../../ui/query-table.ts";

describe("postgres query phase on local-2-cores (real PostgreSQL 18.4, real cgroups and namespaces)", () => {
  it("runs every statement at every cell after an exact prefill, counts each request, and counts a wrong answer as an error", async () => {
    const plan = scenarioPlan("postgres-query-load.yaml", { cell: "requests=1" });
    const query = plan.query!;
    // the scenario's cells, made smaller (the test asserts counts, not rates), plus a statement with a wrong answer
    plan.query = {
      ...query,
      cells: [
        { concurrency: 5, count: 4 },
        { concurrency: 100, count: 1 },
      ],
      statements: [
        ...query.statements,
        { name: "wrong", sql: "SELECT count(*) FROM {table}", rows: 1, value: 999 },
      ],
    };
    const record = await newBenchRun("local-2-cores", plan).run();
    expect(record.error).toBeNull();
    expect(record.ledger).toMatchObject({ sent: 1000, stored: 1000, lost: 0, duplicated: 0 });
    const q = record.query!;
    expect(q).toMatchObject({ sink: "postgres", tableRows: 1000 });
    expect(q.during).toBeUndefined();
    expect(q.prepareMs).toBeGreaterThan(0); // the scenario's prepare: CREATE INDEX, VACUUM ANALYZE
    expect(q.cells.map((c) => c.id)).toEqual([
      "count@5x4",
      "count@100x1",
      "latest@5x4",
      "latest@100x1",
      "by-gen@5x4",
      "by-gen@100x1",
      "wrong@5x4",
      "wrong@100x1",
    ]);
    for (const c of q.cells) {
      expect(c.requests).toBe(c.concurrency * c.count);
      expect(c.latencyMs.max).toBeGreaterThanOrEqual(c.latencyMs.p50);
      if (c.statement === "wrong") {
        expect(c).toMatchObject({ ok: 0, errors: c.requests, rows: 0 });
        expect(c.errorSamples[0]).toBe("wrong answer: first value 1000, expected 999");
      } else {
        expect(c).toMatchObject({ ok: c.requests, errors: 0, errorSamples: [] });
      }
    }
    expect(q.cells.filter((c) => c.statement === "latest").map((c) => c.rows)).toEqual([200, 1000]);
    expect(record.checks.find((c) => c.check === "query.errors")).toMatchObject({ ok: false, actual: 120 });
    expect(record.status).toBe("failed");
    expect(renderQueryTables("t", [record])).toMatch(/requests=1 .*1k .*wrong .*120/);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
    console.log(
      `postgres-query-load (1,000 rows) on local-2-cores: ${q.cells.map((c) => `${c.id} ${c.requestsPerSecond.toFixed(0)} q/s p99 ${c.latencyMs.p99.toFixed(1)} ms`).join("; ")}`,
    );
  }, 120_000);

  it("mixed mode: queries run from the end of the warmup until the load ends, against the growing table, beside the ingest's figures", async () => {
    const plan = scenarioPlan("postgres-mixed-load.yaml", {
      cell: "during=ingest",
      warmup: "1s",
      duration: "4s",
      generator: { batch: 1000, rate: 5000 },
    });
    plan.query = { ...plan.query!, cells: [{ concurrency: 2, count: 5 }] };
    const record = await newBenchRun("local-2-cores", plan).run();
    expect(record.error).toBeNull();
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, rejected: 0 });
    const q = record.query!;
    expect(q).toMatchObject({ sink: "postgres", during: "ingest" });
    expect(q.passes).toBeGreaterThanOrEqual(1);
    // the phase ended with the load: the table held at most what was stored in the end, and the queries saw rows
    expect(q.tableRows).toBeGreaterThan(0);
    expect(q.tableRows).toBeLessThanOrEqual(record.ledger!.stored);
    for (const c of q.cells) {
      expect(c.requests).toBeGreaterThan(0);
      expect({ id: c.id, ok: c.ok, errors: c.errors, samples: c.errorSamples }).toEqual({
        id: c.id,
        ok: c.requests,
        errors: 0,
        samples: [],
      });
    }
    expect(record.status).toBe("ok");
    // the ingest's own figures of the same run, under the query load
    expect(record.summary!.rowsPerSecond).toBeGreaterThan(0);
    expect(record.summary!.deliveryLatency).toMatchObject({ rows: expect.any(Number) });
    expect(renderQueryTables("t", [record])).toMatch(
      /ingest with and without the query load[\s\S]*during=ingest .*during ingest/,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
    console.log(
      `postgres-mixed-load during=ingest: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s, ${q.passes} passes, ${q.cells.map((c) => `${c.id} ${c.requests} requests`).join("; ")}`,
    );
  }, 120_000);
});
