// The application under test on the local platform (docs/app-under-test.md; write-up 003, docs/write-ups.md): the
// sample app (examples/sample-app) runs its own benchmark on the loadgen host of local-pipeline, exporting one trace
// record per request through a one-entry per-worker queue (drops when full) to real syslog-ng 3.38 → real ClickHouse
// 18.16.1. The sink's ledger must hold exactly what the app reports it sent minus what it dropped, its losses must be
// exactly those drops (never stored), the stored content must be what the seeds say, the bytes it wrote must be the
// frames of the records the sink holds, and the tiny queue must drop.
// The tiny-queue cell of scenarios/app-export-ab.yaml, shortened (2 s of load).
import { describe, expect, it } from "vitest";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";

describe("application under test → syslog-ng → ClickHouse (real syslog-ng 3.38, real ClickHouse 18.16.1)", () => {
  it("the sink's ledger equals what the app sent minus its drops, and a one-entry queue drops", async () => {
    const plan = scenarioPlan("app-export-ab.yaml", {
      warmup: "0s",
      duration: "2s",
      cell: "variant=tiny-queue",
      drainTimeoutMs: 30_000,
    });
    const run = newBenchRun("local-pipeline", plan);
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    const app = record.app!;
    const l = record.ledger!;
    const { sent, dropped } = app.figures;
    // the app's own account: every seq it used was either written to the collector or dropped at its queue
    expect(app.raw.records).toBe(sent);
    expect((app.raw.exported as number) + dropped!).toBe(sent);
    // the ledger at the sink, counted by seq: stored = sent − dropped, lost = dropped, nothing else
    expect(dropped).toBeGreaterThan(0);
    expect(l.sent).toBe(sent);
    expect(l.distinct).toBe(sent! - dropped!);
    expect(l.stored).toBe(l.distinct);
    expect(l.lost).toBe(dropped);
    expect([l.duplicated, l.unexpected, l.altered]).toEqual([0, 0, 0]);
    expect(app.ledger).toMatchObject({ unaccounted: 0, agrees: true });
    // bytes, per record (harness/runner/app-bytes.ts): the frames of exactly the records the sink holds, re-encoded by
    // seq from what the sink returns, sum to what the app says it wrote of the records it did not drop
    expect(app.raw.recordBytes).toBe(app.raw.exportedBytes); // syslog: one frame per record, nothing else on the wire
    expect(app.ledger!.bytes).toMatchObject({
      reported: app.figures.recordBytes,
      atSink: app.figures.recordBytes,
      records: l.distinct,
      unaccounted: 0,
      agrees: true,
    });
    expect(record.checks.find((c) => c.check === "app.ledger.bytes.unaccounted")).toBeUndefined();
    // its figures and the hosts' CPU are read
    expect(app.figures.throughput).toBeGreaterThan(0);
    expect(app.figures.sentBytes).toBeGreaterThan(0);
    expect(Object.keys(app.cpuCores).sort()).toEqual(["collector", "loadgen", "sink"]);
    console.log(
      `app-export tiny-queue: sent ${sent}, dropped ${dropped}, stored ${l.distinct}, ${app.figures.throughput!.toFixed(1)} tx/s, p99 ${app.figures.latencyP99Ms} ms`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
