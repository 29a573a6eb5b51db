// Two generator processes on the loadgen host sharing one entry point's load, against a real PostgreSQL: each its
// own genId and seq space, the fixed workload split between them, and the ledger exact.
import { describe, expect, it } from "vitest";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, quickstartPlan } from "../helpers/bench.ts";

describe("generator processes: 2 on one loadgen host (local platform, PostgreSQL)", () => {
  it("splits a fixed workload of 9 requests × 1000 rows 5/4, and the ledger finds every row exactly once", async () => {
    const plan = quickstartPlan({ warmup: "0s", duration: "20s", drainTimeoutMs: 10_000 });
    plan.generator = {
      ...plan.generator,
      config: { ...plan.generator.config, batch: 1000, requests: 9, processes: 2 },
    };
    const record = await newBenchRun("local-2-cores", plan).run();
    expect(record.error).toBeNull();
    expect(record.generators?.map((g) => [g.genId, g.sent, g.requests])).toEqual([
      [0, 5000, 5],
      [1, 4000, 4],
    ]);
    expect(record.generator).toMatchObject({ sent: 9000, accepted: 9000, rejected: 0 });
    expect(record.ledger).toMatchObject({
      sent: 9000,
      stored: 9000,
      distinct: 9000,
      lost: 0,
      duplicated: 0,
      unexpected: 0,
      foreign: 0,
    });
    expect(record.ledger!.missingRanges).toEqual([]);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
