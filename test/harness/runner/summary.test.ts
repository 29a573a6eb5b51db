import { describe, expect, it } from "vitest";
import type { HostWindow } from "../../../harness/observers/types.ts";
import type { Phase, SeriesPoint } from "../../../harness/results/types.ts";
import { findBottleneck } from "../../../harness/runner/bottleneck.ts";
import { computeSummary } from "../../../harness/runner/summary.ts";

function hw(over: Partial<HostWindow>): HostWindow {
  return {
    cpuCores: 0,
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
    ...over,
  };
}

const quarterCore = {
  cpu: { quotaUs: 25000, periodUs: 100000 },
  network: { bandwidthBytesPerSec: 12_000_000 },
};

describe("findBottleneck", () => {
  it("names the network when the link runs at its cap while the CPU is throttled in few periods", () => {
    const sink = [hw({ cpuCores: 0.2, periods: 10, throttledPeriods: 1, netRxBytesPerSec: 11_600_000 })];
    const b = findBottleneck(
      { sink, loadgen: [hw({ cpuCores: 0.5 })] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(b.resource).toBe("network");
    expect(b.score).toBeCloseTo(11.6 / 12, 3);
    expect(b.evidence).toMatch(/cap/);
  });

  it("names the CPU when the sink is throttled in most periods, even with the link half used", () => {
    const sink = [hw({ cpuCores: 0.25, periods: 10, throttledPeriods: 9, netRxBytesPerSec: 6_000_000 })];
    const b = findBottleneck(
      { sink, loadgen: [] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(b.resource).toBe("cpu");
    expect(b.score).toBeCloseTo(0.9, 5);
  });

  it("falls back to the client when no sink resource reaches its threshold", () => {
    const sink = [hw({ cpuCores: 0.6, periods: 10, throttledPeriods: 0 })];
    const b = findBottleneck(
      { sink, loadgen: [hw({ cpuCores: 0.9, periods: 10, throttledPeriods: 8 })] },
      {
        sink: { cpu: { quotaUs: 200000, periodUs: 100000 } },
        loadgen: { cpu: { quotaUs: 100000, periodUs: 100000 } },
      },
      ["sink"],
      "loadgen",
      2,
    );
    expect(b.resource).toBe("client");
    expect(b.evidence).toMatch(/loadgen throttled in 80 %/);
  });

  it("does not call page cache memory pressure: the working set decides", () => {
    const sink = [hw({ memoryPeakBytes: 3.9 * 2 ** 30, memoryWorkingSetBytes: 0.5 * 2 ** 30 })];
    const b = findBottleneck(
      { sink, loadgen: [] },
      { sink: { memoryBytes: 4 * 2 ** 30 }, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(b.resource).toBe("client");
    const pressed = findBottleneck(
      { sink: [hw({ memoryWorkingSetBytes: 3.8 * 2 ** 30 })] },
      { sink: { memoryBytes: 4 * 2 ** 30 } },
      ["sink"],
      "loadgen",
      2,
    );
    expect(pressed.resource).toBe("memory");
  });

  it("names round-trip latency at the first hop when a fixed-rate generator fell behind with nothing saturated", () => {
    const idle = {
      collector: [hw({ cpuCores: 0.2, periods: 10, throttledPeriods: 0 })],
      sink: [hw({ cpuCores: 0.4, periods: 10 })],
      loadgen: [hw({ cpuCores: 0.1 })],
    };
    const caps = {
      collector: { cpu: { quotaUs: 100000, periodUs: 100000 } },
      sink: { cpu: { quotaUs: 100000, periodUs: 100000 } },
    };
    const behind = findBottleneck(idle, caps, ["collector", "sink"], "loadgen", 2, {
      offeredPerSec: 20_000,
      sentPerSec: 13_748,
    });
    expect(behind).toMatchObject({ resource: "latency", host: "collector" });
    expect(behind.score).toBeCloseTo(1 - 13_748 / 20_000, 6);
    expect(behind.evidence).toMatch(
      /^the generator sent 13,748 of the 20,000 events\/s it offered \(69 %\): collector pushed back/,
    );
    // keeping up (≥ 90 % of the offer) is not latency-bound; a closed loop gives no offer: both stay "client"
    expect(
      findBottleneck(idle, caps, ["collector", "sink"], "loadgen", 2, {
        offeredPerSec: 20_000,
        sentPerSec: 19_000,
      }).resource,
    ).toBe("client");
    expect(findBottleneck(idle, caps, ["collector", "sink"], "loadgen", 2).resource).toBe("client");
    // a saturated resource still wins over latency
    const throttled = { ...idle, collector: [hw({ cpuCores: 1, periods: 10, throttledPeriods: 9 })] };
    expect(
      findBottleneck(throttled, caps, ["collector", "sink"], "loadgen", 2, {
        offeredPerSec: 20_000,
        sentPerSec: 10_000,
      }).resource,
    ).toBe("cpu");
  });

  it("names the disk when write IOPS sit at the throttle", () => {
    const sink = [hw({ ioWriteOpsPerSec: 2950 })];
    const b = findBottleneck({ sink }, { sink: { disk: { writeIops: 3000 } } }, ["sink"], "loadgen", 2);
    expect(b.resource).toBe("disk");
  });
});

function point(t: number, phase: Phase, stored: number, lagMs: number, sink: HostWindow): SeriesPoint {
  return {
    t,
    elapsedS: t / 1000,
    phase,
    stored,
    countQueryMs: 5,
    rowsPerSec: null,
    mibPerSec: null,
    lagMs,
    sent: stored,
    accepted: stored,
    hosts: { sink },
  };
}

describe("computeSummary", () => {
  it("divides stored rows by the real elapsed time between the bracketing count queries", () => {
    const w = hw({ cpuCores: 0.25, periods: 10, throttledPeriods: 5 });
    const series = [
      point(1000, "warmup", 1000, 100, w),
      point(2000, "warmup", 2000, 100, w),
      point(3500, "measure", 5000, 200, w), // a slow sample: 1.5 s window
      point(4500, "measure", 7000, 300, w),
      point(5000, "drain", 8000, 50, w),
    ];
    const s = computeSummary({
      series,
      bytesPerRow: 1048.576,
      limits: { sink: quarterCore },
      sinkHosts: ["sink"],
      clientHost: "loadgen",
      machineCores: 2,
    });
    // (7000 - 2000) rows over (4500 - 2000) ms = 2000 rows/s, not 5000 rows / 2 nominal intervals
    expect(s.rowsPerSecond).toBeCloseTo(2000, 6);
    expect(s.measuredSeconds).toBeCloseTo(2.5, 6);
    expect(s.mibPerSecond).toBeCloseTo((2000 * 1048.576) / 2 ** 20, 6);
    expect(s.throttledShare).toBeCloseTo(0.5, 6);
    expect(s.cpuMsPer1000Rows).toBeCloseTo((0.25 * 2.5 * 1000) / 5, 6);
    expect(s.lagMaxMs).toBe(300);
    expect(s.drainSeconds).toBeCloseTo(0.5, 6);
  });

  it("ends the drain at the first point that holds the final count, not at the samples that only confirmed it", () => {
    const w = hw({});
    const at = (t: number, phase: Phase, stored: number) => point(t, phase, stored, 0, w);
    const timed = [
      at(1000, "warmup", 0),
      at(2000, "measure", 1000),
      at(3000, "measure", 2000),
      at(3250, "drain", 2600),
      at(3500, "drain", 3000),
      at(3750, "drain", 3000),
      at(6000, "drain", 3000),
    ];
    const base = {
      bytesPerRow: 100,
      limits: { sink: quarterCore },
      sinkHosts: ["sink"],
      clientHost: "loadgen",
      machineCores: 2,
    };
    expect(computeSummary({ ...base, series: timed }).drainSeconds).toBeCloseTo(0.5, 6);
    // a fixed workload's window ends at the point that first saw it complete: nothing drained after it
    const fixed = [
      at(1000, "warmup", 0),
      at(2000, "measure", 1000),
      at(3000, "measure", 3000),
      at(3500, "drain", 3000),
      at(9000, "drain", 3000),
    ];
    expect(computeSummary({ ...base, series: fixed }).drainSeconds).toBe(0);
    // no drain at all
    expect(computeSummary({ ...base, series: timed.slice(0, 3) }).drainSeconds).toBe(0);
  });

  it("says how many samples the lag percentiles rest on and keeps the largest backlog age (measurement phase only)", () => {
    const w = hw({});
    const series = [
      point(1000, "warmup", 0, 900, w),
      { ...point(2000, "measure", 1000, 100, w), backlogRows: 400, backlogLagMs: 350 },
      { ...point(3000, "measure", 2000, 120, w), backlogRows: null, backlogLagMs: null },
      { ...point(4000, "measure", 3000, 140, w), backlogRows: 10, backlogLagMs: 60 },
      { ...point(5000, "drain", 3000, 5000, w), backlogRows: 10, backlogLagMs: 9000 },
    ];
    const s = computeSummary({
      series,
      bytesPerRow: 100,
      limits: {},
      sinkHosts: ["sink"],
      clientHost: "loadgen",
      machineCores: 2,
    });
    expect(s.lagSamples).toBe(3);
    expect(s.lagMaxMs).toBe(140);
    expect(s.backlogLagMaxMs).toBe(350);
    const none = computeSummary({
      series: series.slice(0, 4).map((p) => ({ ...p, backlogLagMs: null })),
      bytesPerRow: 100,
      limits: {},
      sinkHosts: ["sink"],
      clientHost: "loadgen",
      machineCores: 2,
    });
    expect(none.backlogLagMaxMs).toBeNull();
  });

  it("counts distinct rows in the headline rate when the ledger found duplicates, and keeps the stored rate beside it", () => {
    const w = hw({});
    const series = [
      point(1000, "warmup", 0, 0, w),
      point(2000, "measure", 1000, 0, w),
      point(3000, "measure", 2000, 0, w),
    ];
    const base = {
      series,
      bytesPerRow: 100,
      limits: {},
      sinkHosts: ["sink"],
      clientHost: "loadgen",
      machineCores: 2,
    };
    const s = computeSummary({ ...base, distinctShare: 0.9 });
    expect(s.storedRowsPerSecond).toBeCloseTo(1000, 6);
    expect(s.rowsPerSecond).toBeCloseTo(900, 6);
    expect(computeSummary(base).storedRowsPerSecond).toBeUndefined();
  });

  it("refuses to summarise a run without two measurement samples", () => {
    expect(() =>
      computeSummary({
        series: [],
        bytesPerRow: 1,
        limits: {},
        sinkHosts: ["sink"],
        clientHost: "loadgen",
        machineCores: 2,
      }),
    ).toThrow(/at least two samples/);
  });
});
