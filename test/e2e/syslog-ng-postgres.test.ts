// A real collector pipeline on the local platform: the syslog generator (loadgen host) → syslog-ng 3.38 (collector
// host) → PostgreSQL (sink host), three network namespaces joined by a bridge, each host in its own cgroup.
// The ledger must be exact when nothing goes wrong, and must name exactly the missing seqs when the test kills the
// collector mid-run (what syslog-ng held in memory and in its socket buffers is gone), with or without restarting
// it; a collector frozen with SIGSTOP pushes back over TCP and loses nothing; a pin mismatch refuses to start,
// naming both versions.
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import type { CellPlan } from "../../harness/runner/run.ts";
import type { Downstream, RunningComponent } from "../../infra/components/types.ts";
import { probeSyslogNgVersion, syslogNg, type SyslogNgConfig } from "../../infra/components/syslog-ng.ts";
import type { LocalHost } from "../../infra/local/types.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, projectRoot } from "../helpers/bench.ts";

const STACK = "local-pipeline";

function pipelinePlan(o: { warmup?: string; duration?: string; drainTimeoutMs?: number; collectorVersion?: string; generator?: Record<string, unknown> } = {}): CellPlan {
  const file = path.join(projectRoot, "scenarios/syslog-ng-postgres.yaml");
  const plan = planCells(loadScenarioFile(file), file, { warmup: o.warmup ?? "1s", duration: o.duration ?? "6s", replicates: 1 })[0]!;
  if (o.drainTimeoutMs !== undefined) plan.drainTimeoutMs = o.drainTimeoutMs;
  if (o.collectorVersion) plan.collector = { ...plan.collector!, config: { ...plan.collector!.config, version: o.collectorVersion } };
  if (o.generator) plan.generator = { ...plan.generator, config: { ...plan.generator.config, ...o.generator } };
  return plan;
}

type SinkInfo = { host: string; port: number; params: Record<string, string> };

/** Inclusive runs of the seqs in [0, sent) that are not in `present`. */
function absentRanges(present: Set<number>, sent: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let s = 0; s < sent; s++) {
    if (present.has(s)) continue;
    const last = out.at(-1);
    if (last && last[1] === s - 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}

describe("syslog-ng → PostgreSQL pipeline (real)", () => {
  it("stores every event exactly once: lost 0, duplicated 0, with all three hosts observed and versions recorded", async () => {
    const run = newBenchRun(STACK, pipelinePlan());
    const record = await run.run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    const l = record.ledger!;
    expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, rejected: 0, missingRanges: [] });
    expect(l.sent).toBeGreaterThan(100_000); // 20000 events/s for 7 s
    expect(l.stored).toBe(l.sent);
    expect(record.versions["syslog-ng"]).toEqual({ pinned: "3.38", running: await probeSyslogNgVersion() });
    expect(record.versions.postgres?.running).toBe("18.4");
    expect(Object.keys(record.limits).sort()).toEqual(["collector", "loadgen", "sink"]);
    // the collector's own claims, beside the ledger
    expect((record as unknown as { collectorClaims: unknown }).collectorClaims).toEqual({ name: "syslog-ng", counts: { received: l.sent, written: l.stored, dropped: 0, queued: 0 } });
    const hosts = new Set(record.summary!.bottleneck.candidates.map((c) => c.host));
    expect(hosts.has("collector") && hosts.has("sink")).toBe(true);
    console.log(`syslog-ng-postgres: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, lag p99 ${record.summary!.lagP99Ms?.toFixed(0)} ms, drain ${record.summary!.drainSeconds.toFixed(2)} s, sent ${l.sent}, stored ${l.stored}; bottleneck ${record.summary!.bottleneck.resource} (${record.summary!.bottleneck.evidence})`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the missing seqs when the collector is killed (SIGKILL) mid-run", async () => {
    const run = newBenchRun(STACK, pipelinePlan({ drainTimeoutMs: 3000 }));
    let sink: SinkInfo | undefined;
    let collector: RunningComponent | undefined;
    let killedAt: number | undefined;
    let snapshot: Promise<Set<number>> | undefined;
    run.on("sink", (s: SinkInfo) => { sink = s; });
    run.on("collector", (c: RunningComponent) => { collector = c; });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (killedAt === undefined && p.phase === "measure" && p.stored >= 40_000 && collector?.pid) {
        killedAt = p.stored;
        process.kill(collector.pid, "SIGKILL");
      }
      // once the collector is dead and the generator stopped, the table no longer changes: read every stored seq
      if (p.phase === "drain" && killedAt !== undefined && !snapshot && sink) {
        const s = sink;
        snapshot = (async () => {
          const c = new pg.Client({ host: s.host, port: s.port, user: s.params.user, database: s.params.database });
          await c.connect();
          try {
            const r = await c.query<{ seq: string }>(`SELECT seq FROM ${s.params.table}`);
            return new Set(r.rows.map((x) => Number(x.seq)));
          } finally {
            await c.end();
          }
        })();
      }
    });
    const record = await run.run();
    expect(killedAt).toBeDefined();
    const present = await snapshot!;
    const l = record.ledger!;
    expect(record.status).toBe("failed"); // the scenario's lost: 0 check
    expect(l.duplicated).toBe(0);
    expect(l.unexpected).toBe(0);
    expect(l.stored).toBe(present.size);
    expect(l.lost).toBeGreaterThan(0);
    // what the generator could not even write (after the kill) is rejected, not lost; everything else absent is lost
    const rejected = new Set<number>();
    for (const [a, b] of record.generator!.rejectedRanges) for (let s = a; s <= b; s++) rejected.add(s);
    expect(l.rejected).toBe(rejected.size);
    const absent = absentRanges(present, l.sent);
    const absentCount = absent.reduce((n, [a, b]) => n + b - a + 1, 0);
    expect(absentCount).toBe(l.sent - l.stored);
    const rejectedAbsent = [...rejected].filter((s) => !present.has(s)).length;
    expect(l.lost).toBe(l.sent - l.stored - rejectedAbsent);
    if (rejected.size === 0) expect(l.lost).toBe(l.sent - l.stored);
    // missingRanges: exactly the absent seqs that were not rejected
    const lostRanges = absentRanges(new Set([...present, ...rejected]), l.sent);
    expect(l.missingRanges).toEqual(lostRanges.slice(0, 20).map(([a, b]) => [0, a, b]));
    expect(l.stored).toBeGreaterThanOrEqual(killedAt!);
    console.log(`killed syslog-ng at stored ${killedAt}: sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, rejected ${l.rejected}, missingRanges ${JSON.stringify(l.missingRanges)}`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the seqs lost when the collector is killed and restarted mid-run, while the run goes on", async () => {
    const plan = pipelinePlan({ drainTimeoutMs: 3000 });
    const run = newBenchRun(STACK, plan);
    let sink: SinkInfo | undefined;
    let first: { c: RunningComponent; host: LocalHost; downstream: Downstream } | undefined;
    let second: RunningComponent | undefined;
    let restarting: Promise<void> | undefined;
    let killedAt: number | undefined;
    let snapshot: Promise<Set<number>> | undefined;
    run.on("sink", (s: SinkInfo) => { sink = s; });
    run.on("collector", (c: RunningComponent, info: { host: LocalHost; downstream: Downstream }) => { first = { c, ...info }; });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (killedAt === undefined && p.phase === "measure" && p.stored >= 30_000 && first?.c.pid) {
        killedAt = p.stored;
        const f = first;
        process.kill(f.c.pid!, "SIGKILL");
        // the same config, host, persist file and downstream: the generator reconnects within its back-off
        restarting = (async () => {
          await f.c.stop();
          second = await syslogNg.startLocal(f.host, plan.collector!.config as SyslogNgConfig, undefined, f.downstream);
        })();
      }
      // every drain sample reads the table; the last read, taken after the restarted collector flushed, is the
      // final table (checked against the ledger's stored count below)
      if (p.phase === "drain" && sink) {
        const s = sink;
        snapshot = (async () => {
          const c = new pg.Client({ host: s.host, port: s.port, user: s.params.user, database: s.params.database });
          await c.connect();
          try {
            return new Set((await c.query<{ seq: string }>(`SELECT seq FROM ${s.params.table}`)).rows.map((x) => Number(x.seq)));
          } finally {
            await c.end();
          }
        })();
      }
    });
    const record = await run.run();
    await restarting;
    await second?.stop();
    expect(killedAt).toBeDefined();
    expect(second?.pid).toBeDefined();
    const present = await snapshot!;
    const l = record.ledger!;
    expect(l.stored).toBe(present.size); // the snapshot is the final table
    expect(l).toMatchObject({ duplicated: 0, unexpected: 0 });
    expect(l.stored).toBeGreaterThan(killedAt! + 30_000); // the run went on after the restart
    const rejected = new Set<number>();
    for (const [a, b] of record.generator!.rejectedRanges) for (let s = a; s <= b; s++) rejected.add(s);
    expect(l.rejected).toBe(rejected.size);
    const lostRanges = absentRanges(new Set([...present, ...rejected]), l.sent);
    expect(l.lost).toBe(lostRanges.reduce((n, [a, b]) => n + b - a + 1, 0));
    expect(l.lost + [...rejected].filter((s) => !present.has(s)).length).toBe(l.sent - l.stored);
    expect(l.missingRanges).toEqual(lostRanges.slice(0, 20).map(([a, b]) => [0, a, b]));
    console.log(`killed and restarted syslog-ng at stored ${killedAt}: sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, rejected ${l.rejected}, missingRanges ${JSON.stringify(l.missingRanges)}`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("loses nothing when the collector is frozen (SIGSTOP) for 2 s: TCP pushes back, the lag shows it", async () => {
    const run = newBenchRun(STACK, pipelinePlan());
    let collector: RunningComponent | undefined;
    let frozen = false;
    run.on("collector", (c: RunningComponent) => { collector = c; });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (!frozen && p.phase === "measure" && p.stored >= 40_000 && collector?.pid) {
        frozen = true;
        const pid = collector.pid;
        process.kill(pid, "SIGSTOP");
        setTimeout(() => { try { process.kill(pid, "SIGCONT"); } catch { /* gone */ } }, 2000);
      }
    });
    const record = await run.run();
    expect(frozen).toBe(true);
    expect(record.status).toBe("ok");
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, missingRanges: [] });
    expect(record.ledger!.stored).toBe(record.ledger!.sent);
    expect(record.summary!.lagMaxMs!).toBeGreaterThan(1500);
    console.log(`SIGSTOP 2 s: sent ${record.ledger!.sent}, stored ${record.ledger!.stored}, lag max ${record.summary!.lagMaxMs?.toFixed(0)} ms`);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("refuses to start when the collector's pin does not match the installed syslog-ng, naming both versions", async () => {
    const run = newBenchRun(STACK, pipelinePlan({ collectorVersion: "3.37" }));
    const record = await run.run();
    expect(record.status).toBe("error");
    expect(record.error).toMatchObject({ code: "E_VERSION", kind: "verification" });
    expect(record.error!.message).toContain("3.37");
    expect(record.error!.message).toContain(await probeSyslogNgVersion());
    expect(record.generator).toBeNull(); // no load was ever started
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("refuses a stack without a collector host before provisioning anything", async () => {
    const run = newBenchRun("local-quarter-core", pipelinePlan());
    await expect(run.run()).rejects.toThrow(/needs hosts "loadgen", "collector", "sink"/);
  });

  it("reports a batch the client deliberately sends twice as duplicated rows through the collector, not as throughput", async () => {
    const record = await newBenchRun(STACK, pipelinePlan({ duration: "4s", drainTimeoutMs: 20_000, generator: { duplicateEvery: 20 } })).run();
    const g = record.generator!;
    const l = record.ledger!;
    expect(g.repeated).toBeGreaterThan(0);
    expect(l).toMatchObject({ lost: 0, unexpected: 0, duplicated: g.repeated, distinct: g.sent });
    expect(record.collectorClaims!.counts!.received).toBe(g.sent + g.repeated!); // the collector saw every copy
    expect(record.status).toBe("failed");
    expect(record.summary!.storedRowsPerSecond).toBeGreaterThan(record.summary!.rowsPerSecond);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("scales out over two collector hosts: one generator per collector, an exact ledger per genId, one version on both", async () => {
    const record = await newBenchRun("local-two-collectors", pipelinePlan({ duration: "4s", drainTimeoutMs: 20_000 })).run();
    expect(record.status).toBe("ok");
    expect(record.generators!.map((g) => g.genId)).toEqual([0, 1]);
    const l = record.ledger!;
    expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, missingRanges: [] });
    expect(l.sent).toBe(record.generators![0]!.sent + record.generators![1]!.sent);
    expect(record.generators!.every((g) => g.sent > 0)).toBe(true);
    expect(record.versions["syslog-ng"]!.running).toBe(record.versions["syslog-ng@collector-2"]!.running);
    expect(record.collectorClaims).toMatchObject({ hosts: ["collector-1", "collector-2"], counts: { written: l.stored } });
    expect(Object.keys(record.limits).sort()).toEqual(["collector-1", "collector-2", "loadgen", "sink"]);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
