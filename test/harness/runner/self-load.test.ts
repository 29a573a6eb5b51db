// The collector's own load as the run drives it (harness/runner/self-load.ts), against a scripted counter: when its
// load is over, what it reports as sent, and what the ledger's `inferred` and content-check note say.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Phase, RunRecord, SeriesPoint } from "../../../harness/results/types.ts";
import { mibText } from "../../../harness/results/format.ts";
import { evaluateChecks } from "../../../harness/runner/checks.ts";
import { describeRun } from "../../../ui/run-block.ts";
import {
  CollectorLoad,
  inferredSent,
  selfLoadBytesUnknown,
  selfLoadFidelity,
  type SelfLoadCounts,
} from "../../../harness/runner/self-load.ts";
import { computeSummary } from "../../../harness/runner/summary.ts";

const plan = {
  selfLoad: {
    collector: "syslog-ng",
    input: "example-msg-generator()",
    counter: "syslog-ng-ctl stats: source s_gen processed",
    generatorsPerHost: 1,
    quietMs: 30,
  },
};

/** A counter that answers the scripted counts in turn, then the last one forever. */
function scripted(counts: SelfLoadCounts[]): () => Promise<SelfLoadCounts> {
  let i = 0;
  return async () => counts[Math.min(i++, counts.length - 1)]!;
}

describe("the collector's own load (generator: none)", () => {
  it("is over only once the count stood still for quietMs with every made event stored and nothing queued", async () => {
    const load = new CollectorLoad(
      scripted([
        { made: [100], queued: 0 },
        { made: [200], queued: 50 },
        { made: [200], queued: 50 },
        { made: [200], queued: 0 },
      ]),
      1,
      plan.selfLoad.quietMs,
      "no generator process",
    );
    expect(await load.settled(0)).toBe(false); // the count moved (first reading)
    expect(await load.settled(100)).toBe(false); // moved again
    await sleep(40);
    expect(await load.settled(200)).toBe(false); // still, all stored, but the collector still queues 50
    expect(await load.settled(150)).toBe(false); // nothing queued, but 50 made events are not stored yet
    expect(await load.settled(200)).toBe(true);
    expect(load.progress).toEqual({ sent: 200, accepted: 200, rejected: 0, bytes: 0, requests: 0 });
  });

  it("is not over while the count stands still for less than quietMs (a full source window makes no event for a while)", async () => {
    const load = new CollectorLoad(
      scripted([{ made: [10, 20], queued: 0 }]),
      2,
      10_000,
      "no generator process",
    );
    expect(await load.settled(30)).toBe(false);
    expect(await load.settled(30)).toBe(false);
  });

  it("reports sent = accepted = made per generator index, never lowering a count, and an error for a gen that made nothing", async () => {
    const load = new CollectorLoad(
      scripted([
        { made: [5, 7], queued: 0 },
        { made: [3, 9], queued: 0 },
      ]),
      2,
      30,
      "why",
    );
    await load.refresh();
    const finals = await load.stop();
    expect(finals.map((f) => [f.genId, f.sent, f.accepted, f.rejected, f.rejectedRanges, f.errors])).toEqual([
      [0, 5, 5, 0, [], []],
      [1, 9, 9, 0, [], []],
    ]);
    expect(await new CollectorLoad(scripted([{ made: [0], queued: 0 }]), 1, 30, "why").stop()).toMatchObject([
      { sent: 0, errors: [expect.stringMatching(/made no event/)] },
    ]);
    expect(await load.syncClock()).toEqual({ measured: false, offsetMs: 0, reason: "why" });
    expect(load.backlog()).toBeNull();
    expect(load.finished).toBe(false);
  });

  it("says in the ledger where sent came from, and why the content is not compared", () => {
    expect(inferredSent(plan, [2000], { unexpected: 3 })).toEqual({
      from: "collector",
      by: "syslog-ng example-msg-generator()",
      counter: "syslog-ng-ctl stats: source s_gen processed",
      made: [2000],
      outsideRange: 3,
    });
    expect(selfLoadFidelity(plan).unavailable).toMatch(
      /^the events were made by syslog-ng's example-msg-generator\(\), not by a seeded generator/,
    );
  });
});

describe("a generator: none run's MiB/s (no bytes pass the harness)", () => {
  const w = {
    cpuCores: 0.1,
    throttledShare: null,
    periods: 0,
    throttledPeriods: 0,
    throttledMs: 0,
    memoryBytes: 0,
    memoryPeakBytes: 0,
    memoryWorkingSetBytes: 0,
    ioReadBytesPerSec: 0,
    ioWriteBytesPerSec: 0,
    ioReadOpsPerSec: 0,
    ioWriteOpsPerSec: 0,
    netRxBytesPerSec: 0,
    netTxBytesPerSec: 0,
    netRxPacketsPerSec: 0,
    netTxPacketsPerSec: 0,
  };
  const pt = (t: number, phase: Phase, stored: number): SeriesPoint => ({
    t,
    elapsedS: t / 1000,
    phase,
    stored,
    countQueryMs: 1,
    rowsPerSec: null,
    mibPerSec: null,
    lagMs: null,
    sent: stored,
    accepted: stored,
    rejected: 0,
    hosts: { sink: w },
  });
  const summary = (bytesUnknown?: string) =>
    computeSummary({
      series: [pt(1000, "warmup", 0), pt(2000, "measure", 1000), pt(3000, "measure", 2000)],
      bytesPerRow: 0,
      limits: { sink: {} },
      sinkHosts: ["sink"],
      clientHost: "loadgen",
      machineCores: 2,
      ...(bytesUnknown ? { bytesUnknown } : {}),
    });

  it("is null with the reason in the summary, and the result line says it is not known instead of 0.00 MiB/s", () => {
    const s = summary(selfLoadBytesUnknown(plan));
    expect(s.rowsPerSecond).toBeCloseTo(1000, 6);
    expect(s).toMatchObject({
      mibPerSecond: null,
      bytesPerRow: null,
      logMibPerSecond: null,
      logBytesPerRow: null,
      bytesUnknown: "syslog-ng's example-msg-generator() made the events: the harness sent no bytes",
    });
    const line = describeRun({
      runId: "r",
      status: "ok",
      stack: "s",
      scenario: "q",
      limits: {},
      checks: [],
      error: null,
      ledger: null,
      summary: s,
    } as unknown as RunRecord)
      .split("\n")
      .find((l) => l.includes("rows/s"))!;
    expect(line).toMatch(
      /^ {2}1,000 rows\/s, log and wire MiB\/s not known \(syslog-ng's example-msg-generator\(\) made the events: the harness sent no bytes\) over 2\.0 s; sink 0\.10 cores/,
    );
    expect(line).not.toMatch(/0\.00 MiB\/s/);
    // a check on it fails (no number), never passes on a false 0
    expect(
      evaluateChecks([{ path: "summary.mibPerSecond", max: 1 }], { ledger: null, summary: s })[0],
    ).toMatchObject({ ok: false, actual: null });
  });

  it("keeps its MiB/s when the bytes are known, and reads an older result's 0 over 0 bytes per row as not known", () => {
    expect(summary().mibPerSecond).toBe(0);
    expect(mibText({ mibPerSecond: 4.814, bytesPerRow: 249 })).toBe("4.81 wire MiB/s");
    expect(mibText({ mibPerSecond: 4.814, bytesPerRow: 249, logMibPerSecond: 3.116 })).toBe(
      "3.12 log MiB/s, 4.81 wire MiB/s",
    );
    expect(mibText({ mibPerSecond: 0, bytesPerRow: 0 })).toBe(
      "log and wire MiB/s not known (no bytes were counted as sent)",
    );
  });
});
