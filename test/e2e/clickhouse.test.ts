// A real run of scenarios/clickhouse-direct.yaml: the clickhouse-http generator in the loadgen namespace POSTs
// JSONEachRow inserts over the shaped link into the real ClickHouse 18.16.1 server in the sink's cgroup and
// namespace; the verifier counts and accounts at the sink. Then, a run in which the test deletes known rows at the
// sink mid-run must report exactly those seqs lost. The loads are paced at 16000 rows/s (two batches of 8000 a
// second): the ledger and the server's own account are asserted, and every row stored is read back by the content
// check, so a closed loop's row count (the machine's speed) would only lengthen the test.
import type { RunStorage } from "../../harness/results/types.ts";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import type { CellPlan } from "../../harness/runner/cell-plan.ts";
import { newBenchRun, projectRoot } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { expectDuplicatesCounted } from "../helpers/pipeline-ledger.ts";

function clickhouseDirectPlan(overrides: {
  warmup: string;
  duration: string;
  drainTimeoutMs?: number;
  generator?: Record<string, unknown>;
}): CellPlan {
  const file = path.join(projectRoot, "scenarios/clickhouse-direct.yaml");
  const plan = planCells(loadScenarioFile(file), file, {
    warmup: overrides.warmup,
    duration: overrides.duration,
    replicates: 1,
  })[0]!;
  if (overrides.drainTimeoutMs !== undefined) plan.drainTimeoutMs = overrides.drainTimeoutMs;
  if (overrides.generator)
    plan.generator = { ...plan.generator, config: { ...plan.generator.config, ...overrides.generator } };
  return plan;
}

describe("clickhouse-direct on local-2-cores (real ClickHouse 18.16.1, real cgroups and namespaces)", () => {
  it("stores every row it was sent, exactly, records the running version, and leaves nothing behind", async () => {
    const run = newBenchRun(
      "local-2-cores",
      clickhouseDirectPlan({ warmup: "1s", duration: "5s", generator: { rate: 16_000 } }),
    );
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    expect(record.versions.clickhouse).toEqual({ pinned: "18.16.1", running: "18.16.1" });
    expect(record.summary!.rowsPerSecond).toBeGreaterThan(0);
    const ledger = record.ledger as NonNullable<typeof record.ledger> & { server: Record<string, number> };
    expect(ledger).toMatchObject({
      lost: 0,
      duplicated: 0,
      rejected: 0,
      unexpected: 0,
      overwritten: 0,
      missingRanges: [],
    });
    expect(ledger.sent).toBeGreaterThan(0);
    expect(ledger.sent % 8000).toBe(0);
    expect(ledger.stored).toBe(ledger.sent);
    expect(ledger.distinct).toBe(ledger.sent);
    expect(ledger.accepted).toBe(ledger.sent);
    expect(record.generator!.requests).toBe(ledger.sent / 8000);
    // the server's own account agrees: one INSERT per batch of 8000 rows, none refused
    expect(ledger.server).toMatchObject({
      insertQueries: ledger.sent / 8000,
      insertedRows: ledger.sent,
      rowsPerInsert: 8000,
      rejectedInserts: 0,
    });
    expect(ledger.server.activeParts).toBeGreaterThanOrEqual(1);
    expect(record.checks.every((c) => c.ok)).toBe(true);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
    console.log(
      `clickhouse-direct on local-2-cores: ${Math.round(record.summary!.rowsPerSecond)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, ` +
        `${ledger.stored} stored, ${ledger.server.insertQueries} inserts, max ${ledger.server.maxActiveParts} active parts`,
    );
  });

  it("finds exactly the seqs deleted at the sink mid-run, and fails the lost check", async () => {
    const run = newBenchRun(
      "local-2-cores",
      clickhouseDirectPlan({
        warmup: "1s",
        duration: "5s",
        drainTimeoutMs: 3000,
        generator: { rate: 16_000 },
      }),
    );
    let sink: { host: string; port: number; params: Record<string, string> } | undefined;
    let deleting: Promise<void> | undefined;
    run.on("sink", (s) => {
      sink = s;
    });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (deleting || p.phase !== "measure" || p.stored < 20_000 || !sink) return;
      const { host, port, params } = sink;
      deleting = (async () => {
        const q = async (sql: string): Promise<string> => {
          const r = await fetch(`http://${host}:${port}/`, { method: "POST", body: sql });
          const text = await r.text();
          if (r.status !== 200) throw new Error(`${sql}: ${text}`);
          return text;
        };
        // a mutation rewrites the parts that exist now; rows inserted later are not touched
        await q(`ALTER TABLE ${params.table} DELETE WHERE (seq BETWEEN 1000 AND 1099) OR seq = 15000`);
        for (
          let i = 0;
          i < 100 && (await q(`SELECT count() FROM system.mutations WHERE NOT is_done`)).trim() !== "0";
          i++
        ) {
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
    });
    const record = await run.run();
    await deleting;
    expect(deleting).toBeDefined();
    expect(record.status).toBe("failed");
    expect(record.ledger).toMatchObject({ lost: 101, duplicated: 0, unexpected: 0, rejected: 0 });
    expect(record.ledger!.stored).toBe(record.ledger!.sent - 101);
    expect(record.ledger!.missingRanges).toEqual([
      [0, 1000, 1099],
      [0, 15000, 15000],
    ]);
    expect(record.checks.find((c) => c.check === "ledger.lost")).toMatchObject({ ok: false, actual: 101 });
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports a deliberately repeated insert as duplicated rows (a plain MergeTree does not deduplicate), not as throughput", async () => {
    const record = await newBenchRun(
      "local-2-cores",
      clickhouseDirectPlan({
        warmup: "1s",
        duration: "4s",
        generator: { batch: 4000, rate: 16_000, duplicateEvery: 5 },
      }),
    ).run();
    expectDuplicatesCounted(record);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("runs a fixed workload (write-up 001's batch x count: 40 requests of 500) to its end and measures until all of it is stored", async () => {
    const plan = clickhouseDirectPlan({
      warmup: "0s",
      duration: "60s",
      generator: { batch: 500, requests: 40 },
    });
    plan.intervalMs = 100;
    const t0 = Date.now();
    const run = newBenchRun("local-2-cores", plan);
    const record = await run.run();
    expect(Date.now() - t0).toBeLessThan(45_000); // ended with the workload, not after the 60 s cap
    expect(record.status).toBe("ok");
    expect(record.generator).toMatchObject({ sent: 20_000, accepted: 20_000, requests: 40 });
    // write-up 001's unit beside rows/s: requests per second at the stored rate, 500 rows a request
    expect(record.summary!.requestsPerSecond).toBeCloseTo(record.summary!.rowsPerSecond / 500, 6);
    expect(record.ledger).toMatchObject({ stored: 20_000, lost: 0, duplicated: 0 });
    // the table's active parts on disk, per million rows, against the parts' own uncompressed bytes (real ClickHouse)
    const st = record.storage as RunStorage;
    expect(st.rows).toBe(20_000);
    expect(st.bytes).toBeGreaterThan(0);
    expect(st.uncompressedBytes).toBeGreaterThan(0);
    expect(st.bytesPerMillionRows).toBe(Math.round((st.bytes / 20_000) * 1e6));
    expect(st.compression).toBeCloseTo(st.uncompressedBytes! / st.bytes, 9);
    expect(st.source).toMatch(/system\.parts/);
    const s = record.summary!;
    // the measured window ends at the first sample that saw the whole workload stored
    const series = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { phase: string; stored: number; t: number });
    const measure = series.filter((p) => p.phase === "measure");
    expect(measure.at(-1)!.stored).toBe(20_000);
    expect(measure.slice(0, -1).every((p) => p.stored < 20_000)).toBe(true);
    // ... and opens at the sample taken when the generator was ready (warmup 0s); on a busy machine some rows may
    // already be stored by the time that sample is read, and the window counts only what it saw arrive
    const opening = series[series.indexOf(measure[0]!) - 1]!;
    expect(opening.phase).toBe("warmup");
    expect(opening.stored).toBeLessThan(20_000);
    expect(s.rowsPerSecond * s.measuredSeconds).toBeCloseTo(20_000 - opening.stored, 0);
    expect(s.measuredSeconds * 1000).toBeCloseTo(measure.at(-1)!.t - opening.t, 0);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
