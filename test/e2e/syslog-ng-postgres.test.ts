// A real collector pipeline on the local platform: the syslog generator (loadgen host) → syslog-ng 3.38 (collector
// host) → PostgreSQL (sink host), three network namespaces joined by a bridge, each host in its own cgroup.
// The ledger must be exact when nothing goes wrong, and must name exactly the missing seqs when the test kills the
// collector mid-run (what syslog-ng held in memory and in its socket buffers is gone), with or without restarting
// it; a collector frozen with SIGSTOP pushes back over TCP and loses nothing; a pin mismatch refuses to start,
// naming both versions.
import { describe, expect, it } from "vitest";
import type { CellPlan } from "../../harness/runner/cell-plan.ts";
import type { Downstream, RunningComponent } from "../../core/component.ts";
import {
  probeSyslogNgVersion,
  syslogNg,
  type SyslogNgConfig,
} from "../../plugins/collectors/syslog-ng/component.ts";
import type { LocalHost } from "../../core/hosts.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { ownClockSkewMs } from "../helpers/own-skew.ts";
import { newBenchRun, scenarioPlan, type ScenarioPlanOptions } from "../helpers/bench.ts";
import {
  expectCleanRun,
  expectDuplicatesCounted,
  expectPinRefusal,
  expectLedgerNamesExactlyTheAbsentSeqs,
  expectWithinOffer,
  readSeries,
  readStoredSeqs,
  runKillingCollector,
  type SinkInfo,
  tableSeqScans,
} from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";

/** scenarios/syslog-ng-postgres.yaml, by default with a short warmup and measurement. */
const pipelinePlan = (o: ScenarioPlanOptions = {}): CellPlan =>
  scenarioPlan("syslog-ng-postgres.yaml", { warmup: "1s", duration: "6s", ...o });

describe("syslog-ng → PostgreSQL pipeline (real)", () => {
  it("stores every event exactly once: lost 0, duplicated 0, with all three hosts observed and versions recorded; the drain samples live, and the table is scanned only by the completion passes, which settle the samples too", async () => {
    // the sink's table scans when the ledger begins (at least one completion pass)
    let scansBeforeLedger = -1;
    const run = newBenchRun(STACK, pipelinePlan(), undefined, {
      beforeLedger: async (s: SinkInfo) => {
        scansBeforeLedger = await tableSeqScans(s, 1);
      },
    });
    const record = await run.run();
    const l = expectCleanRun(record);
    // after this timed load the drain sampled live, as the load did: each completion pass read the table once, the
    // samples settled from its own rows (a settle query beside it would scan it again), whatever the number of drain
    // samples (an exact count in each would read it again)
    const series = readSeries(run);
    const drain = series.filter((p) => p.phase === "drain");
    const checks = record.instrument!.overhead.completionChecks!;
    expect(drain.length).toBeGreaterThan(0);
    expect(checks).toBeGreaterThanOrEqual(1);
    expect(scansBeforeLedger, `${drain.length} drain samples, ${checks} completion passes`).toBe(checks);
    // settled, the drain's points are exact: they never fall, the last holds every row, and the drain ends at the first
    // that does (summary.drainSeconds)
    drain.forEach((p, i) => expect(p.stored).toBeGreaterThanOrEqual(i === 0 ? 0 : drain[i - 1]!.stored));
    expect(drain.at(-1)!.stored).toBe(l.stored);
    const end = series.filter((p) => p.phase === "measure").at(-1)!;
    const drained = [end, ...drain].find((p) => p.stored === l.stored)!;
    expect(record.summary!.drainSeconds).toBeCloseTo((drained.t - end.t) / 1000, 6);
    // 20000 events/s offered: never more than that over the time it ran; how much less depends on how busy the
    // machine is, so the ledger (exact, above) is what is asserted
    const bound = expectWithinOffer(run, record, { rate: 20_000, batch: 500 });
    // the loadgen clock was measured before load (one machine: our own wall-minus-harness skew, ~0, within a bound of a pipe round trip) and the lag
    // percentiles say how many samples they rest on: one per measurement sample
    expect(record.clock).toMatchObject({ measured: true, exchanges: 8 });
    if (!record.clock?.measured) throw new Error("clock not measured");
    // + 5 ms: the generator's wall-minus-harness skew is its own process's, taken seconds before this worker's, and
    // the kernel slews the wall clock between them (a CI run on a busy machine parted them by 2.5 ms against a
    // 0.18 ms bound); a wrong offset is seconds or a whole round trip off, far outside it
    expect(Math.abs(record.clock.offsetMs - ownClockSkewMs())).toBeLessThanOrEqual(record.clock.boundMs + 5);
    expect(record.clock.boundMs).toBeLessThan(1000);
    const measureSamples = readSeries(run).filter((p) => p.phase === "measure" && p.lagMs !== null).length;
    expect(record.summary!.lagSamples).toBe(measureSamples);
    expect(record.versions["syslog-ng"]).toEqual({ pinned: "3.38", running: await probeSyslogNgVersion() });
    expect(record.versions.postgres?.running).toBe("18.4");
    expect(Object.keys(record.limits).sort()).toEqual(["collector", "loadgen", "sink"]);
    // the collector's own claims, beside the ledger
    expect((record as unknown as { collectorClaims: unknown }).collectorClaims).toEqual({
      name: "syslog-ng",
      counts: { received: l.sent, written: l.stored, dropped: 0, queued: 0 },
    });
    const hosts = new Set(record.summary!.bottleneck.candidates.map((c) => c.host));
    expect(hosts.has("collector") && hosts.has("sink")).toBe(true);
    // what the rows cost the whole stack: every host's CPU over the measurement (local-pipeline sets no price)
    const cost = record.summary!.cost!;
    expect(Object.keys(cost.hostsCoreSeconds).sort()).toEqual(["collector", "loadgen", "sink"]);
    for (const [h, s] of Object.entries(cost.hostsCoreSeconds)) expect(s, h).toBeGreaterThan(0);
    expect(cost.coreSecondsPerMillionRows).toBeGreaterThan(0);
    expect(cost.usdPerMillionRows).toBeUndefined();
    expect(cost.noPrice).toMatch(/^no price for every host \(loadgen: no pricePerHour in the stack file/);
    console.log(
      `syslog-ng-postgres cost: ${cost.coreSecondsPerMillionRows!.toFixed(1)} core-s/M rows (${Object.entries(
        cost.hostsCoreSeconds,
      )
        .map(([h, s]) => `${h} ${s.toFixed(2)} core-s`)
        .join(", ")}); sink only ${record.summary!.cpuMsPer1000Rows.toFixed(2)} CPU ms/1k rows`,
    );
    console.log(
      `syslog-ng-postgres: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, lag p99 (n=${record.summary!.lagSamples}) ${record.summary!.lagP99Ms?.toFixed(0)} ms, backlog ≥ ${record.summary!.backlogLagMaxMs?.toFixed(0)} ms, clock ${JSON.stringify(record.clock)}, drain ${record.summary!.drainSeconds.toFixed(2)} s, sent ${l.sent} (offer bound ${bound.toFixed(0)}), stored ${l.stored}; bottleneck ${record.summary!.bottleneck.resource} (${record.summary!.bottleneck.evidence})`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the missing seqs when the collector is killed (SIGKILL) mid-run", async () => {
    // what the generator could not even write (after the kill) is rejected, not lost; everything else absent is lost
    const { record } = await runKillingCollector(newBenchRun(STACK, pipelinePlan({ drainTimeoutMs: 3000 })), {
      killAtStored: 1,
      label: "syslog-ng",
    });
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("reports exactly the seqs lost when the collector is killed and restarted mid-run, while the run goes on", async () => {
    // a longer measurement: the restart must finish while the generator still sends, however busy the machine
    const plan = pipelinePlan({ drainTimeoutMs: 3000, duration: "10s" });
    const run = newBenchRun(STACK, plan);
    let sink: SinkInfo | undefined;
    let first: { c: RunningComponent; host: LocalHost; downstream: Downstream } | undefined;
    let second: RunningComponent | undefined;
    let restarting: Promise<void> | undefined;
    let killedAt: number | undefined;
    let sentAfterRestart: number | undefined;
    let secondKilled = false;
    let snapshot: Promise<Set<number>> | undefined;
    run.on("sink", (s: SinkInfo) => {
      sink = s;
    });
    run.on("collector", (c: RunningComponent, info: { host: LocalHost; downstream: Downstream }) => {
      first = { c, ...info };
    });
    run.on("tick", (p: { stored: number; sent: number; phase: string }) => {
      // the first seq the generator sent once the restarted collector was up (seqs are 0..sent-1)
      if (second && sentAfterRestart === undefined && p.phase !== "drain") sentAfterRestart = p.sent;
      // kill once rows flow (the first measurement sample with any stored), not at a count a busy machine may not reach
      if (killedAt === undefined && p.phase === "measure" && p.stored > 0 && first?.c.pid) {
        killedAt = p.stored;
        const f = first;
        process.kill(f.c.pid!, "SIGKILL");
        // the same config, host, persist file and downstream: the generator reconnects within its back-off
        restarting = (async () => {
          await f.c.stop();
          second = await syslogNg.startLocal(
            f.host,
            plan.collector!.config as SyslogNgConfig,
            undefined,
            f.downstream,
          );
        })();
      }
      // The load is over at the first drain sample: the restarted collector is killed there, so the table stops
      // changing however long a busy machine would take to flush it (what it still held is lost, and named). Every
      // drain sample reads the table; the last read is the final table (checked against the ledger below).
      if (p.phase === "drain" && second?.pid && !secondKilled) {
        secondKilled = true;
        process.kill(second.pid, "SIGKILL");
      }
      if (p.phase === "drain" && sink) snapshot = readStoredSeqs(sink);
    });
    const record = await run.run();
    await restarting;
    await second?.stop();
    expect(killedAt).toBeDefined();
    expect(second?.pid).toBeDefined();
    // the snapshot is the final table: the ledger names exactly its absent seqs
    const present = await snapshot!;
    expectLedgerNamesExactlyTheAbsentSeqs(record, present);
    const l = record.ledger!;
    // the run went on after the restart: rows the generator sent after the restarted collector was up are stored
    expect(sentAfterRestart).toBeDefined();
    let newest = -1;
    for (const seq of present) if (seq > newest) newest = seq;
    expect(newest).toBeGreaterThanOrEqual(sentAfterRestart!);
    expect(l.stored).toBeGreaterThan(killedAt!);
    console.log(
      `killed and restarted syslog-ng at stored ${killedAt}: sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, rejected ${l.rejected}, missingRanges ${JSON.stringify(l.missingRanges)}`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("loses nothing when the collector is frozen (SIGSTOP) for 2 s: TCP pushes back, the lag shows it", async () => {
    const run = newBenchRun(STACK, pipelinePlan());
    let collector: RunningComponent | undefined;
    let frozen = false;
    run.on("collector", (c: RunningComponent) => {
      collector = c;
    });
    run.on("tick", (p: { stored: number; phase: string }) => {
      if (!frozen && p.phase === "measure" && p.stored > 0 && collector?.pid) {
        frozen = true;
        const pid = collector.pid;
        process.kill(pid, "SIGSTOP");
        setTimeout(() => {
          try {
            process.kill(pid, "SIGCONT");
          } catch {
            /* gone */
          }
        }, 2000);
      }
    });
    const record = await run.run();
    expect(frozen).toBe(true);
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    expect(record.ledger).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, missingRanges: [] });
    expect(record.ledger!.stored).toBe(record.ledger!.sent);
    expect(record.summary!.lagMaxMs!).toBeGreaterThan(1500);
    console.log(
      `SIGSTOP 2 s: sent ${record.ledger!.sent}, stored ${record.ledger!.stored}, lag max ${record.summary!.lagMaxMs?.toFixed(0)} ms`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("refuses to start when the collector's pin does not match the installed syslog-ng, naming both versions", async () => {
    const run = newBenchRun(STACK, pipelinePlan({ collectorVersion: "3.37" }));
    const record = await run.run();
    expectPinRefusal(record, "3.37", await probeSyslogNgVersion());
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("refuses a stack without a collector host before provisioning anything", async () => {
    const run = newBenchRun("local-quarter-core-cpu-only", pipelinePlan()); // loadgen and sink only
    await expect(run.run()).rejects.toThrow(/needs hosts "loadgen", "collector", "sink"/);
  });

  it("reports a batch the client deliberately sends twice as duplicated rows through the collector, not as throughput", async () => {
    const record = await newBenchRun(
      STACK,
      pipelinePlan({ duration: "4s", drainTimeoutMs: 20_000, generator: { duplicateEvery: 20 } }),
    ).run();
    expectDuplicatesCounted(record);
    expect(record.collectorClaims!.counts!.received).toBe(
      record.generator!.sent + record.generator!.repeated!,
    ); // the collector saw every copy
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("scales out over two collector hosts: one generator per collector, an exact ledger per genId, one version on both", async () => {
    const record = await newBenchRun(
      "local-two-collectors",
      pipelinePlan({ duration: "4s", drainTimeoutMs: 20_000 }),
    ).run();
    expect(record.error).toBeNull();
    expect(record.status).toBe("ok");
    expect(record.generators!.map((g) => g.genId)).toEqual([0, 1]);
    const l = record.ledger!;
    expect(l).toMatchObject({ lost: 0, duplicated: 0, unexpected: 0, missingRanges: [] });
    expect(l.sent).toBe(record.generators![0]!.sent + record.generators![1]!.sent);
    expect(record.generators!.every((g) => g.sent > 0)).toBe(true);
    expect(record.versions["syslog-ng"]!.running).toBe(record.versions["syslog-ng@collector-2"]!.running);
    expect(record.collectorClaims).toMatchObject({
      hosts: ["collector-1", "collector-2"],
      counts: { written: l.stored },
    });
    expect(Object.keys(record.limits).sort()).toEqual(["collector-1", "collector-2", "loadgen", "sink"]);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
