// The second real collector pipeline on the local platform: the syslog generator (loadgen host) → rsyslog 8.2302
// (collector host: imtcp, mmpstrucdata, ompgsql) → PostgreSQL (sink host), three network namespaces joined by a
// bridge, each host in its own cgroup, all through the runner. The ledger must be exact when nothing goes wrong,
// with rsyslog's own impstats claims beside it; when the test kills rsyslogd mid-run (what it held in its queues
// and socket buffers is gone) the ledger must name exactly the seqs absent from the table, read here directly;
// a pin mismatch refuses to start before any load, naming both versions.
import { describe, expect, it } from "vitest";
import type { CellPlan } from "../../harness/runner/cell-plan.ts";
import { probeRsyslogVersion } from "../../plugins/collectors/rsyslog/component.ts";
import { newBenchRun, scenarioPlan, type ScenarioPlanOptions } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import {
  expectCleanRun,
  expectDuplicatesCounted,
  expectPinRefusal,
  expectWithinOffer,
  runKillingCollector,
} from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";

/** scenarios/rsyslog-postgres.yaml with a short warmup and measurement. */
const pipelinePlan = (o: ScenarioPlanOptions = {}): CellPlan =>
  scenarioPlan("rsyslog-postgres.yaml", { warmup: "1s", duration: "6s", ...o });

describe("rsyslog → PostgreSQL pipeline (real)", () => {
  it("stores every event exactly once: lost 0, duplicated 0, rsyslog's impstats claims beside the ledger", async () => {
    // a generous drain bound: ompgsql's one-transaction-at-a-time flush of its queue slows with the machine (the
    // drain ends as soon as everything acknowledged is stored, so a quiet machine never waits for it)
    const run = newBenchRun(STACK, pipelinePlan({ drainTimeoutMs: 180_000 }));
    const record = await run.run();
    const l = expectCleanRun(record);
    // 10000 events/s offered: never more than that over the time it ran; flow control slows the sender when other
    // work shares the 2 cores, so how much less is not asserted (the ledger is exact, above)
    expectWithinOffer(run, record, { rate: 10_000, batch: 500 });
    expect(record.versions.rsyslog).toEqual({ pinned: "8.2302", running: await probeRsyslogVersion() });
    expect(record.versions.postgres?.running).toBe("18.4");
    expect(Object.keys(record.limits).sort()).toEqual(["collector", "loadgen", "sink"]);
    expect(record.collectorClaims).toEqual({
      name: "rsyslog",
      counts: { received: l.sent, written: l.stored, dropped: 0, queued: 0 },
    });
    const hosts = new Set(record.summary!.bottleneck.candidates.map((c) => c.host));
    expect(hosts.has("collector") && hosts.has("sink")).toBe(true);
    console.log(
      `rsyslog-postgres: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, lag p99 ${record.summary!.lagP99Ms?.toFixed(0)} ms, drain ${record.summary!.drainSeconds.toFixed(2)} s, sent ${l.sent}, stored ${l.stored}; bottleneck ${record.summary!.bottleneck.resource} (${record.summary!.bottleneck.evidence})`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the missing seqs when rsyslogd is killed (SIGKILL) mid-run", async () => {
    const { record } = await runKillingCollector(newBenchRun(STACK, pipelinePlan({ drainTimeoutMs: 3000 })), {
      killAtStored: 10_000,
      label: "rsyslogd",
    });
    // a dead collector has no claims: the error is kept beside the ledger instead
    expect(record.collectorClaims).toMatchObject({ name: "rsyslog", counts: null });
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("refuses to start when the collector's pin does not match the installed rsyslogd, naming both versions", async () => {
    const run = newBenchRun(STACK, pipelinePlan({ collectorVersion: "8.2402" }));
    const record = await run.run();
    expectPinRefusal(record, "8.2402", await probeRsyslogVersion());
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports a batch the client deliberately sends twice as duplicated rows through rsyslog, not as throughput", async () => {
    const record = await newBenchRun(
      STACK,
      pipelinePlan({ duration: "4s", drainTimeoutMs: 20_000, generator: { duplicateEvery: 20 } }),
    ).run();
    expectDuplicatesCounted(record);
    expect(record.collectorClaims!.counts!.received).toBe(
      record.generator!.sent + record.generator!.repeated!,
    ); // rsyslog saw every copy
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
