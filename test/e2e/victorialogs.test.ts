// Real runs into VictoriaLogs 1.52.2 (the project's Go module build, scripts/build-victorialogs.sh) on the local
// platform: the es-bulk, loki-push and http-json generators in the loadgen namespace send over the shaped link to the
// server in the sink's cgroup and namespace (write-up 004's caps on local-quarter-core), at the paths the sink
// component hands them; the verifier counts with LogsQL, and every stored entry is read back by the content check.
// The loads are paced (a closed loop's row count would only measure the machine): the ledgers are asserted, exactly.
import { describe, expect, it } from "vitest";
import type { RunRecord, RunStorage } from "../../harness/results/types.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { expectCleanRun, expectDuplicatesCounted } from "../helpers/pipeline-ledger.ts";

const STACK = "local-quarter-core";

/** What every clean run into VictoriaLogs shows: exact ledger, the content check over every entry, the pin, no leftover. */
function expectExact(record: RunRecord, batch: number): NonNullable<RunRecord["ledger"]> {
  const l = expectCleanRun(record);
  expect(l.sent).toBeGreaterThan(0);
  expect(l.sent % batch).toBe(0);
  expect(l).toMatchObject({ accepted: l.sent, distinct: l.sent, overwritten: 0, foreign: 0, altered: 0 });
  expect(l.fidelity).toMatchObject({ mode: "all", rowsCompared: l.stored, seqsCompared: l.sent, altered: 0 });
  expect(record.versions.victorialogs).toEqual({ pinned: "1.52.2", running: "1.52.2" });
  expect(record.checks.every((c) => c.ok)).toBe(true);
  expect(leftovers(record.runId.slice(-6))).toEqual([]);
  return l;
}

describe("VictoriaLogs 1.52.2 direct on local-quarter-core (real VictoriaLogs, real cgroups and namespaces)", () => {
  it("real VictoriaLogs: es-bulk _bulk requests at /insert/elasticsearch/_bulk: every seq stored once, the content check passes", async () => {
    const record = await newBenchRun(
      STACK,
      scenarioPlan("victorialogs-es-bulk.yaml", {
        warmup: "1s",
        duration: "5s",
        generator: { batch: 2000, rate: 8000 },
      }),
    ).run();
    const l = expectExact(record, 2000);
    expect(record.generator!.requests).toBe(l.sent / 2000);
    // the run's own instance: its /metrics after force_flush, per million stored entries, with VictoriaLogs' own
    // uncompressed figure
    const st = record.storage as RunStorage;
    expect(st.rows).toBe(l.distinct);
    expect(st.bytes).toBeGreaterThan(0);
    expect(st.bytesPerMillionRows).toBe(Math.round((st.bytes / st.rows) * 1e6));
    expect(st.uncompressedBytes).toBeGreaterThan(st.bytes);
    expect(st.compression).toBeCloseTo(st.uncompressedBytes! / st.bytes, 9);
    expect(st.source).toMatch(new RegExp(`all ${l.stored} entries it holds, vl_storage_rows, are the run's`));
    console.log(
      `victorialogs es-bulk: ${l.stored} stored of ${l.sent}, ${Math.round(record.summary!.rowsPerSecond)} rows/s`,
    );
  });

  it("real VictoriaLogs: loki-push at /insert/loki/api/v1/push: every seq stored once, the content check passes", async () => {
    const record = await newBenchRun(
      STACK,
      scenarioPlan("victorialogs-loki-push.yaml", {
        warmup: "1s",
        duration: "5s",
        generator: { batch: 1000, rate: 8000 },
      }),
    ).run();
    const l = expectExact(record, 1000);
    console.log(
      `victorialogs loki-push: ${l.stored} stored of ${l.sent}, ${Math.round(record.summary!.rowsPerSecond)} rows/s`,
    );
  });

  it("real VictoriaLogs: http-json NDJSON at /insert/jsonline: every seq stored once, the content check passes", async () => {
    const record = await newBenchRun(
      STACK,
      scenarioPlan("victorialogs-jsonline.yaml", {
        warmup: "1s",
        duration: "5s",
        generator: { batch: 500, rate: 8000 },
      }),
    ).run();
    expectExact(record, 500);
  });

  it("real VictoriaLogs: a deliberately repeated _bulk request is stored twice and counted as duplicated, not as throughput", async () => {
    const record = await newBenchRun(
      STACK,
      scenarioPlan("victorialogs-es-bulk.yaml", {
        warmup: "1s",
        duration: "4s",
        generator: { batch: 1000, rate: 8000, duplicateEvery: 5 },
      }),
    ).run();
    expectDuplicatesCounted(record);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
