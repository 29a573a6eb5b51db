// The ledger against a real run: during the run, the test deletes known rows from the real table and the ledger
// must find exactly those seqs lost. The load is paced (the ledger is asserted, not a rate): a closed loop's row count
// is the machine's speed, and every row it stores is counted and compared by the content check after the drain.
import type { RunStorage } from "../../harness/results/types.ts";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { SeriesPoint } from "../../harness/results/types.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { expectDuplicatesCounted } from "../helpers/pipeline-ledger.ts";
import { newBenchRun, quickstartPlan } from "../helpers/bench.ts";

describe("ledger on a real PostgreSQL run", () => {
  it("finds exactly the seqs deleted at the sink mid-run, and fails the lost check", async () => {
    const plan = quickstartPlan({ warmup: "1s", duration: "6s", drainTimeoutMs: 3000 });
    plan.generator = { ...plan.generator, config: { ...plan.generator.config, batch: 1000, rate: 6000 } };
    const run = newBenchRun("local-2-cores", plan);
    let sink: { host: string; port: number; params: Record<string, string> } | undefined;
    let deleted: number | undefined;
    let deleting: Promise<void> | undefined;
    run.on("sink", (s) => {
      sink = s;
    });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (deleting || p.phase !== "measure" || p.stored < 20_000 || !sink) return;
      const client = new pg.Client({
        host: sink.host,
        port: sink.port,
        user: sink.params.user,
        database: sink.params.database,
      });
      deleting = (async () => {
        await client.connect();
        const res = await client.query(
          `DELETE FROM ${sink!.params.table} WHERE (seq BETWEEN 1000 AND 1099) OR seq = 15000`,
        );
        deleted = res.rowCount ?? 0;
        await client.end();
      })();
    });
    const record = await run.run();
    await deleting;
    expect(deleted).toBe(101);
    expect(record.status).toBe("failed");
    expect(record.ledger).toMatchObject({ lost: 101, duplicated: 0, unexpected: 0 });
    expect(record.ledger!.stored).toBe(record.ledger!.sent - 101);
    expect(record.ledger!.missingRanges).toEqual([
      [0, 1000, 1099],
      [0, 15000, 15000],
    ]);
    expect(record.checks.find((c) => c.check === "ledger.lost")).toMatchObject({ ok: false, actual: 101 });
    // rows deleted at the sink never arrive: the drain waits for them until its timeout and says so (run.json
    // completion, the series' drain points), while drainSeconds ends at the last arrival, the first drain point that
    // held the final count (harness/runner/summary.ts), not at the timeout
    expect(record.completion).toMatchObject({ phase: "drain", outcome: "timeout", missing: 101 });
    expect(record.completion!.waitedMs).toBeGreaterThanOrEqual(3000);
    const series = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as SeriesPoint);
    const end = series.filter((p) => p.phase === "measure").at(-1)!;
    const drain = series.filter((p) => p.phase === "drain");
    expect((drain.at(-1)!.t - end.t) / 1000).toBeGreaterThanOrEqual(2.5);
    const held = [end, ...drain].find((p) => p.stored === record.ledger!.stored)!;
    expect(record.summary!.drainSeconds).toBeCloseTo((held.t - end.t) / 1000, 6);
    expect(record.summary!.drainSeconds).toBeLessThan((drain.at(-1)!.t - end.t) / 1000);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports a deliberately repeated batch as duplicated rows, not as higher throughput", async () => {
    const plan = quickstartPlan({ warmup: "1s", duration: "5s", drainTimeoutMs: 10_000 });
    plan.generator = {
      ...plan.generator,
      config: { ...plan.generator.config, batch: 2000, rate: 10_000, duplicateEvery: 10 },
    };
    const record = await newBenchRun("local-2-cores", plan).run();
    // every repeated event is stored twice: exactly the generator's repeats are the ledger's duplicates; the headline
    // rate counts distinct rows, the rate of all stored rows is kept beside it
    expectDuplicatesCounted(record);
    // the table on disk with indexes and TOAST (real PostgreSQL), per million distinct rows
    const st = record.storage as RunStorage;
    expect(st.rows).toBe(record.ledger!.distinct);
    expect(st.bytes).toBeGreaterThan(8192);
    expect(st.bytesPerMillionRows).toBe(Math.round((st.bytes / st.rows) * 1e6));
    expect(st.source).toMatch(/pg_total_relation_size/);
    expect(record.generator!.repeated! % 2000).toBe(0); // whole batches
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
