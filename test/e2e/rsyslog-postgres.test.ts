// The second real collector pipeline on the local platform: the syslog generator (loadgen host) → rsyslog 8.2302
// (collector host: imtcp, mmpstrucdata, ompgsql) → PostgreSQL (sink host), three network namespaces joined by a
// bridge, each host in its own cgroup, all through the runner. The ledger must be exact when nothing goes wrong,
// with rsyslog's own impstats claims beside it; when the test kills rsyslogd mid-run (what it held in its queues
// and socket buffers is gone) the ledger must name exactly the seqs absent from the table, read here directly;
// a pin mismatch refuses to start before any load, naming both versions.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import type { CellPlan } from "../../harness/runner/run.ts";
import { probeRsyslogVersion } from "../../infra/components/rsyslog.ts";
import type { RunningComponent } from "../../infra/components/types.ts";
import { newBenchRun, projectRoot } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { expectLedgerNamesExactlyTheAbsentSeqs, readStoredSeqs, type SinkInfo } from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";

function pipelinePlan(o: { drainTimeoutMs?: number; collectorVersion?: string } = {}): CellPlan {
  const file = path.join(projectRoot, "scenarios/rsyslog-postgres.yaml");
  const plan = planCells(loadScenarioFile(file), file, { warmup: "1s", duration: "6s", replicates: 1 })[0]!;
  if (o.drainTimeoutMs !== undefined) plan.drainTimeoutMs = o.drainTimeoutMs;
  if (o.collectorVersion) plan.collector = { ...plan.collector!, config: { ...plan.collector!.config, version: o.collectorVersion } };
  return plan;
}

describe("rsyslog → PostgreSQL pipeline (real)", () => {
  it("stores every event exactly once: lost 0, duplicated 0, rsyslog's impstats claims beside the ledger", async () => {
    const run = newBenchRun(STACK, pipelinePlan());
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    const l = record.ledger!;
    expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, rejected: 0, missingRanges: [] });
    // 10000 events/s for 7 s offered; flow control may slow the sender when other tests share the 2 cores
    expect(l.sent).toBeGreaterThan(10_000);
    expect(l.stored).toBe(l.sent);
    expect(record.versions.rsyslog).toEqual({ pinned: "8.2302", running: await probeRsyslogVersion() });
    expect(record.versions.postgres?.running).toBe("18.4");
    expect(Object.keys(record.limits).sort()).toEqual(["collector", "loadgen", "sink"]);
    expect(record.collectorClaims).toEqual({ name: "rsyslog", counts: { received: l.sent, written: l.stored, dropped: 0, queued: 0 } });
    const hosts = new Set(record.summary!.bottleneck.candidates.map((c) => c.host));
    expect(hosts.has("collector") && hosts.has("sink")).toBe(true);
    console.log(`rsyslog-postgres: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, lag p99 ${record.summary!.lagP99Ms?.toFixed(0)} ms, drain ${record.summary!.drainSeconds.toFixed(2)} s, sent ${l.sent}, stored ${l.stored}; bottleneck ${record.summary!.bottleneck.resource} (${record.summary!.bottleneck.evidence})`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the missing seqs when rsyslogd is killed (SIGKILL) mid-run", async () => {
    const run = newBenchRun(STACK, pipelinePlan({ drainTimeoutMs: 3000 }));
    let sink: SinkInfo | undefined;
    let collector: RunningComponent | undefined;
    let killedAt: number | undefined;
    let snapshot: Promise<Set<number>> | undefined;
    run.on("sink", (s: SinkInfo) => { sink = s; });
    run.on("collector", (c: RunningComponent) => { collector = c; });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (killedAt === undefined && p.phase === "measure" && p.stored >= 10_000 && collector?.pid) {
        killedAt = p.stored;
        process.kill(collector.pid, "SIGKILL");
      }
      // once rsyslogd is dead and the generator stopped, the table no longer changes: read every stored seq
      if (p.phase === "drain" && killedAt !== undefined && !snapshot && sink) snapshot = readStoredSeqs(sink);
    });
    const record = await run.run();
    expect(killedAt).toBeDefined();
    const present = await snapshot!;
    expect(record.status).toBe("failed"); // the scenario's lost: 0 check
    const lost = expectLedgerNamesExactlyTheAbsentSeqs(record, present);
    expect(lost).toBeGreaterThan(0);
    expect(record.ledger!.stored).toBeGreaterThanOrEqual(killedAt!);
    // a dead collector has no claims: the error is kept beside the ledger instead
    expect(record.collectorClaims).toMatchObject({ name: "rsyslog", counts: null });
    const l = record.ledger!;
    console.log(`killed rsyslogd at stored ${killedAt}: sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, rejected ${l.rejected}, missingRanges ${JSON.stringify(l.missingRanges)}`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("refuses to start when the collector's pin does not match the installed rsyslogd, naming both versions", async () => {
    const run = newBenchRun(STACK, pipelinePlan({ collectorVersion: "8.2402" }));
    const record = await run.run();
    expect(record.status).toBe("error");
    expect(record.error).toMatchObject({ code: "E_VERSION", kind: "verification" });
    expect(record.error!.message).toContain("8.2402");
    expect(record.error!.message).toContain(await probeRsyslogVersion());
    expect(record.generator).toBeNull(); // no load was ever started
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
