import { describe, expect, it } from "vitest";
import {
  AT_CAP,
  bottleneckLabel,
  WAIT_MS_PER_SEC,
  findBottleneck,
  MARGIN,
  THRESHOLD,
} from "../../../harness/runner/bottleneck.ts";
import { appliedHostLimits } from "../../../harness/results/caps.ts";
import { hostWindow as hw } from "../../helpers/host-window.ts";

const quarterCore = {
  cpu: { quotaUs: 25000, periodUs: 100000 },
  network: { bandwidthBytesPerSec: 12_000_000 },
};
const MACHINE = { cores: 2, memoryBytes: 24 * 2 ** 30 };

describe("findBottleneck: margins and uncertain verdicts (observation vectors)", () => {
  it("a link at 0.84 of its cap against 0.85 is 'uncertain (network 0.84 / cpu throttled 0.19 …)', not client or network", () => {
    const sink = [
      hw({ cpuCores: 0.1, periods: 100, throttledPeriods: 19, netRxBytesPerSec: 0.84 * 12_000_000 }),
    ];
    const b = findBottleneck(
      { sink, loadgen: [hw({ cpuCores: 0.3 })] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(b.resource).toBe("uncertain");
    expect(bottleneckLabel(b)).toBe("uncertain (network 0.84 / cpu throttled 0.19)");
    expect(b.margin).toBeCloseTo(-0.01, 6);
    expect(b.threshold).toBe(THRESHOLD.network);
    expect(b.evidence).toMatch(/within ±0\.05 of its 0\.85 threshold \(margin −0\.01\)/);
  });

  it("just above the threshold but within the margin is uncertain too; beyond the margin it binds and prints the margin", () => {
    const at = (share: number) => [hw({ netRxBytesPerSec: share * 12_000_000 })];
    expect(
      findBottleneck({ sink: at(0.85 + MARGIN - 0.001) }, { sink: quarterCore }, ["sink"], "loadgen", 2)
        .resource,
    ).toBe("uncertain");
    const bound = findBottleneck({ sink: at(0.97) }, { sink: quarterCore }, ["sink"], "loadgen", 2);
    expect(bound.resource).toBe("network");
    expect(bound.margin).toBeCloseTo(0.12, 6);
    expect(bound.evidence).toMatch(/margin \+0\.12 over its 0\.85 threshold/);
    const below = findBottleneck(
      { sink: at(0.5), loadgen: [hw({})] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(below.resource).toBe("client");
    expect(below.margin).toBeCloseTo(-0.35, 6);
    expect(below.evidence).toMatch(/margin −0\.35 to its 0\.85 threshold/);
  });

  it("a link observed at its cap (score ≥ AT_CAP) is the verdict even when the host also waited for CPUs; below it contention still wins", () => {
    // the docker-debian-network-bound e2e on a busy machine: the link at 1.0 of its cap, 96 % of the runnable time waiting
    const sink = (share: number) => [
      hw({
        cpuCores: 0.05,
        periods: 100,
        throttledPeriods: 0,
        netRxBytesPerSec: share * 12_000_000,
        runDelayMs: 1180,
        contentionMs: 1180,
      }),
    ];
    const at = findBottleneck(
      { sink: sink(1.0), loadgen: [hw({})] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(at.resource).toBe("network");
    expect(at.candidates.some((c) => c.resource === "contention" && c.score > 0.9)).toBe(true);
    const under = findBottleneck(
      { sink: sink(AT_CAP - 0.01), loadgen: [hw({})] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(under.resource).toBe("contention");
  });

  it("a sink whose wait for a CPU is a large share of its little runnable time but under WAIT_MS_PER_SEC is not named; the link below its cap is", () => {
    // the docker-debian-network-bound e2e in a CI run beside the local lane: 58 ms/s of wait, 64 % of the sink's
    // runnable time, while the link carried 0.9 of its cap (under AT_CAP, so the cap rule did not apply)
    const sink = (waitMs: number) => [
      hw({
        cpuCores: 0.033,
        periods: 100,
        throttledPeriods: 0,
        netRxBytesPerSec: 0.9 * 12_000_000,
        runDelayMs: waitMs,
        contentionMs: waitMs,
      }),
    ];
    const quiet = findBottleneck(
      { sink: sink(58), loadgen: [hw({})] },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(WAIT_MS_PER_SEC).toBe(100);
    expect(quiet.resource).toBe("network");
    const kept = quiet.candidates.find((c) => c.resource === "contention" && c.host === "sink");
    expect(kept?.score).toBeCloseTo(58 / (58 + 33), 2);
    expect(kept?.evidence).toMatch(
      /58 ms\/s .*64 % of its runnable time; below the 100 ms\/s floor, not named$/,
    );
    // at the floor it is named again (its margin over 0.3 is larger than the link's over 0.85)
    expect(
      findBottleneck(
        { sink: sink(100), loadgen: [hw({})] },
        { sink: quarterCore, loadgen: {} },
        ["sink"],
        "loadgen",
        2,
      ).resource,
    ).toBe("contention");
  });

  it("names host contention when the sink waits for CPUs other load holds, with its figures", () => {
    // 600 ms/s runnable but waiting, 400 ms/s on a CPU, throttled 0 ms: 60 % of its runnable time waiting
    const sink = [hw({ cpuCores: 0.4, runDelayMs: 600, contentionMs: 600 })];
    const b = findBottleneck({ sink, loadgen: [hw({})] }, { sink: {}, loadgen: {} }, ["sink"], "loadgen", 2);
    expect(b.resource).toBe("contention");
    expect(bottleneckLabel(b)).toBe("host contention");
    expect(b.score).toBeCloseTo(0.6, 6);
    expect(b.evidence).toMatch(/sink waited for a CPU 600 ms\/s while not throttled by its own cap/);
  });

  it("names host contention on the loadgen when no sink resource binds and other load starved the client; an almost idle client's wait is not named", () => {
    // the hogged caps-and-contention e2e in the full suite beside a CPU hog: the sink idle (its wait share 0.2), the
    // loadgen runnable but waiting 450 ms/s against 300 ms/s on a CPU (60 % of its runnable time)
    const sink = [hw({ cpuCores: 0.2, runDelayMs: 50, contentionMs: 50 })];
    const starved = [hw({ cpuCores: 0.3, runDelayMs: 450, contentionMs: 450 })];
    const b = findBottleneck({ sink, loadgen: starved }, { sink: {}, loadgen: {} }, ["sink"], "loadgen", 2);
    expect(b.resource).toBe("contention");
    expect(b.host).toBe("loadgen");
    expect(b.score).toBeCloseTo(0.6, 6);
    expect(b.margin).toBeCloseTo(0.3, 6);
    expect(b.evidence).toMatch(
      /^loadgen waited for a CPU 450 ms\/s .*; no collector or sink resource reached its threshold .*margin \+0\.30 over its 0\.3 threshold$/,
    );
    // within the margin: uncertain, naming the loadgen
    const edge = findBottleneck(
      { sink, loadgen: [hw({ cpuCores: 0.7, runDelayMs: 300, contentionMs: 300 })] },
      { sink: {}, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(edge.resource).toBe("uncertain");
    expect(edge.host).toBe("loadgen");
    // the sink's own 50 ms/s of wait is under the floor: the closest sink candidate listed beside it is its CPU
    expect(bottleneckLabel(edge)).toBe("uncertain (host contention 0.30 / cpu 0.10)");
    // a quiet machine's sequential client: 30 ms/s of wait is 30 % of its 0.07 core's runnable time, yet below the
    // WAIT_MS_PER_SEC floor, so the pattern (client) is named, with the loadgen's wait among the candidates
    const idle = findBottleneck(
      { sink, loadgen: [hw({ cpuCores: 0.07, runDelayMs: 30, contentionMs: 30 })] },
      { sink: {}, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(WAIT_MS_PER_SEC).toBe(100);
    expect(idle.resource).toBe("client");
    expect(
      idle.candidates.some((c) => c.host === "loadgen" && c.resource === "contention" && c.score > 0.29),
    ).toBe(true);
    // a sink resource that binds outranks a starved client: the sink's cap held the throughput
    const capped = findBottleneck(
      { sink: [hw({ cpuCores: 0.25, periods: 100, throttledPeriods: 90 })], loadgen: starved },
      { sink: quarterCore, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
    );
    expect(capped.resource).toBe("cpu");
    expect(capped.host).toBe("sink");
    // an open loop that fell behind because its client was starved: contention, not latency
    const open = findBottleneck(
      { sink, loadgen: starved },
      { sink: {}, loadgen: {} },
      ["sink"],
      "loadgen",
      2,
      { offeredPerSec: 20_000, sentPerSec: 9_000 },
    );
    expect(open.resource).toBe("contention");
  });

  it("scores libvirt totals as reads + writes against the one budget", () => {
    const disk = { readIops: 3000, writeIops: 3000, totalIops: 3000 };
    const sink = [hw({ ioReadOpsPerSec: 1500, ioWriteOpsPerSec: 1400 })];
    const b = findBottleneck({ sink }, { sink: { disk } }, ["sink"], "loadgen", 2);
    expect(b.resource).toBe("disk");
    expect(b.score).toBeCloseTo(2900 / 3000, 6);
    expect(b.evidence).toMatch(/read \+ write IOPS 2900 of a 3000 total \(libvirt total_iops_sec\)/);
  });
});

describe("appliedHostLimits: the bottleneck scores what was applied", () => {
  const requested = {
    cpu: { quotaUs: 25000, periodUs: 100000 },
    memoryBytes: 2 * 2 ** 30,
    network: { bandwidthBytesPerSec: 12_000_000 },
  };
  it("takes the kernel's read-back values over the request, and drops caps at or above the machine", () => {
    const l = {
      requested: {},
      applied: {
        cfsQuotaUs: 50000,
        cfsPeriodUs: 100000,
        memoryLimitBytes: 2 ** 30,
        tbfRateBytesPerSec: 6_000_000,
      },
      enforced: true,
      notes: [],
    };
    expect(appliedHostLimits(l, requested, MACHINE)).toEqual({
      cpu: { quotaUs: 50000, periodUs: 100000 },
      memoryBytes: 2 ** 30,
      network: { bandwidthBytesPerSec: 6_000_000 },
    });
    const big = {
      ...l,
      applied: { cfsQuotaUs: 200000, cfsPeriodUs: 100000, memoryLimitBytes: 9223372036854771712 },
    };
    expect(appliedHostLimits(big, { cpu: { quotaUs: 200000, periodUs: 100000 } }, MACHINE)).toEqual({});
  });
  it("a host not enforced keeps only what was read back; an enforced one without read-back keeps its request", () => {
    expect(
      appliedHostLimits({ requested: {}, applied: {}, enforced: false, notes: [] }, requested, MACHINE),
    ).toEqual({});
    expect(
      appliedHostLimits(
        { requested: {}, applied: { vmSize: "Standard_E2bs_v5" }, enforced: true, notes: [] },
        requested,
        MACHINE,
      ),
    ).toEqual(requested);
  });
});
