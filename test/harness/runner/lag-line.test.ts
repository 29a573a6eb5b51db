// The run's lag line in the terminal (harness/runner/drive.ts, describeRun): percentiles with the samples they rest
// on, the backlog lower bound, the clock offset applied (or why there is none).
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../../harness/results/types.ts";
import { deliveryLine, describeRun, lagLine, verdictLine } from "../../../ui/run-block.ts";

const summary = { lagP50Ms: 120.4, lagP99Ms: 480.2, lagMaxMs: 495, lagSamples: 30, backlogLagMaxMs: 610 };
const rec = (over: Partial<RunRecord>): RunRecord =>
  ({
    runId: "r",
    status: "ok",
    stack: "s",
    scenario: "q",
    limits: {},
    checks: [],
    error: null,
    ledger: null,
    summary: {
      rowsPerSecond: 1,
      mibPerSecond: 0,
      measuredSeconds: 1,
      sinkCores: 0,
      throttledShare: null,
      sinkNetworkMbitPerSecond: 0,
      bottleneck: { resource: "client", evidence: "e" },
      ...summary,
    },
    ...over,
  }) as unknown as RunRecord;

describe("lag line", () => {
  it("names n, the backlog and the measured clock offset", () => {
    const r = rec({
      clock: { measured: true, offsetMs: 0.031, boundMs: 0.112, roundTripMs: 0.2, exchanges: 8, method: "m" },
    });
    expect(lagLine(r)).toBe(
      "lag p50 120 ms, p99 (n=30) 480 ms, max 495 ms; backlog ≥ 610 ms at most; clock offset +0.03 ± 0.11 ms (8 exchanges)",
    );
    expect(describeRun(r)).toContain("  lag p50 120 ms, p99 (n=30) 480 ms");
  });

  it("says when the offset was not measured, and prints nothing without lag", () => {
    const r = rec({
      clock: {
        measured: false,
        offsetMs: 0,
        reason: "the generator did not answer a clock ping within 5000 ms",
      },
    });
    expect(lagLine(r)).toMatch(
      /; clock offset not measured \(the generator did not answer a clock ping within 5000 ms\): lag uncorrected$/,
    );
    expect(lagLine(rec({ summary: { ...rec({}).summary!, lagP99Ms: null } }))).toBeNull();
  });
});

describe("a run interrupted before it measured", () => {
  it("says nothing was measured instead of printing no figures at all; a measured interrupted run says its ledger was not taken", () => {
    const early = describeRun(rec({ status: "interrupted", summary: null }) as RunRecord);
    expect(early).toContain("  nothing measured: interrupted before its measurement began");
    const late = describeRun(rec({ status: "interrupted" }));
    expect(late).not.toContain("nothing measured");
    expect(late).toContain("  ledger: not taken (the run ended, interrupted,");
  });
});

describe("delivery and verdict lines", () => {
  it("names the percentiles, the rows they rest on, the stamp's resolution and the clock; or why there are none", () => {
    const d = {
      rows: 60_000,
      p50Ms: 12,
      p99Ms: 80,
      maxMs: 140,
      resolutionMs: 1000,
      unstamped: 0,
      belowZero: 0,
      clock: "one clock: this machine",
    };
    const r = rec({
      summary: {
        ...rec({}).summary!,
        deliveryLatency: d,
        saturation: { state: "steady", label: "steady", evidence: "no growth", samples: 9 },
      },
    });
    expect(deliveryLine(r)).toBe(
      "delivery p50 12 ms, p99 80 ms, max 140 ms over 60,000 rows (stored_at − sent_at at the sink; stamped to 1,000 ms, read at its middle; one clock: this machine)",
    );
    expect(describeRun(r)).toContain("  verdict: steady (no growth)");
    const u = rec({
      summary: { ...rec({}).summary!, deliveryLatency: { unavailable: "Loki keeps no receive time" } },
    });
    expect(deliveryLine(u)).toBe("delivery latency: unavailable (Loki keeps no receive time)");
    expect(deliveryLine(rec({}))).toBeNull();
  });

  it("a saturated verdict says when it began", () => {
    expect(
      verdictLine({
        state: "saturated",
        label: "saturated (backpressure)",
        beganS: 4.25,
        evidence: "lag +400 ms/s",
        samples: 20,
      }),
    ).toBe("saturated (backpressure) from 4.3 s (lag +400 ms/s)");
  });
});
