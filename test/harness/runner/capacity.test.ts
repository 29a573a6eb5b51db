// The capacity search's rules over a fake step function (a stack with a known ceiling, in milliseconds) and the
// judgement of one step from a run record and its series (harness/runner/capacity.ts).
import { describe, expect, it } from "vitest";
import {
  DEFAULT_BOUNDS,
  judgeStep,
  searchCapacity,
  type StepFunction,
  type StepJudgement,
  type StepOffer,
} from "../../../harness/runner/capacity.ts";
import { writeCapacity, type CapacityFile } from "../../../harness/results/capacity.ts";
import { renderCapacity, renderCapacityComparison, stepLine } from "../../../ui/capacity.ts";
import { compareCommand } from "../../../harness/results/compare.ts";
import type { RunRecord, SeriesPoint } from "../../../harness/results/types.ts";
import { kernelRelease } from "../../../harness/results/format.ts";
import { capacitySpec } from "../../../harness/report/charts/capacity.ts";
import { renderSvg } from "../../../harness/report/render.ts";
import { capacityPlan } from "../../../harness/runner/capacity-run.ts";
import path from "node:path";
import os from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { program } from "../../../harness/cli/index.ts";

/** A judged step that sustained or broke on `bound`. */
function judged(
  rate: number,
  ok: boolean,
  bound: StepJudgement["boundBy"][number] = "latency",
): StepJudgement {
  return {
    rate,
    offeredPerSec: rate,
    sentPerSec: rate,
    storedPerSec: ok ? rate : rate * 0.8,
    deliveryP99Ms: ok ? 100 : 5000,
    lagP99Ms: 100,
    lagSlope: 0,
    verdict: ok ? "steady" : "saturated (backpressure)",
    lost: 0,
    rejected: 0,
    status: "ok",
    runId: `r${rate}`,
    ok,
    boundBy: ok ? [] : [bound],
    reasons: ok ? [] : [`${bound} broke`],
  };
}

/** A stack that sustains every rate up to `ceiling`, recording the rates it was asked for. */
function stackWithCeiling(
  ceiling: number,
  bound: StepJudgement["boundBy"][number] = "latency",
): { step: StepFunction; asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    step: async (rate) => {
      asked.push(rate);
      return judged(rate, rate <= ceiling, bound);
    },
  };
}

describe("capacity search (ramp, then bisection; fake step function)", () => {
  it("ramps by the factor to the first bad rate, then bisects until the interval is within the tolerance", async () => {
    const s = stackWithCeiling(3300);
    const r = await searchCapacity({ startRate: 500, factor: 2, tolerance: 0.1, maxSteps: 20 }, s.step);
    expect(s.asked).toEqual([500, 1000, 2000, 4000, 3000, 3500, 3250]);
    expect(r.steps.map((x) => x.phase)).toEqual([
      "ramp",
      "ramp",
      "ramp",
      "ramp",
      "bisect",
      "bisect",
      "bisect",
    ]);
    expect(r).toMatchObject({
      sustainableRate: 3250,
      interval: { lastGood: 3250, firstBad: 3500 },
      stopped: "converged",
    });
    expect(r.relativeWidth!).toBeLessThanOrEqual(0.1);
    // the step that set the first bad rate, and what bound it
    expect(r.brokeAt).toBe(6);
    expect(r.boundBy).toEqual(["latency"]);
    expect(r.steps.map((x) => x.index)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("keeps the ceiling inside [last good, first bad] for any ceiling, start and tolerance", async () => {
    for (const ceiling of [1, 7, 99, 1000, 1001, 4096, 123_457]) {
      for (const start of [1, 100, 5000]) {
        const r = await searchCapacity(
          { startRate: start, factor: 2, tolerance: 0.05, maxSteps: 60 },
          stackWithCeiling(ceiling).step,
        );
        expect(r.stopped, `ceiling ${ceiling} start ${start}`).toBe("converged");
        expect(r.interval.lastGood!).toBeLessThanOrEqual(ceiling);
        expect(r.interval.firstBad!).toBeGreaterThan(ceiling);
        // within the tolerance, or adjacent whole rates
        expect(r.interval.firstBad! - r.interval.lastGood! <= Math.max(1, 0.05 * r.interval.lastGood!)).toBe(
          true,
        );
      }
    }
  });

  it("ramps down from a start rate the stack cannot take, and says so when nothing sustains", async () => {
    const down = stackWithCeiling(300);
    const r = await searchCapacity({ startRate: 2000, factor: 2, tolerance: 0.25, maxSteps: 10 }, down.step);
    expect(down.asked.slice(0, 4)).toEqual([2000, 1000, 500, 250]);
    expect(r.interval.lastGood).toBeLessThanOrEqual(300);
    expect(r.interval.firstBad).toBeGreaterThan(300);
    const none = await searchCapacity(
      { startRate: 8, factor: 2, tolerance: 0.1, maxSteps: 10 },
      stackWithCeiling(0, "loss").step,
    );
    expect(none).toMatchObject({
      sustainableRate: null,
      stopped: "no-sustainable-rate",
      interval: { lastGood: null, firstBad: 1 },
      boundBy: ["loss"],
    });
  });

  it("stops at max-steps with what it has, and on an interrupted or failed step", async () => {
    const r = await searchCapacity(
      { startRate: 100, factor: 2, tolerance: 0.01, maxSteps: 3 },
      stackWithCeiling(1e9).step,
    );
    expect(r).toMatchObject({
      stopped: "max-steps",
      sustainableRate: 400,
      interval: { lastGood: 400, firstBad: null },
      brokeAt: null,
    });
    let n = 0;
    const interrupted = await searchCapacity(
      { startRate: 100, factor: 2, tolerance: 0.1, maxSteps: 9 },
      async (rate) => (++n > 2 ? null : judged(rate, true)),
    );
    expect(interrupted).toMatchObject({ stopped: "interrupted", sustainableRate: 200 });
    expect(interrupted.steps).toHaveLength(2);
    const failed = await searchCapacity(
      { startRate: 100, factor: 2, tolerance: 0.1, maxSteps: 9 },
      async (rate) => judged(rate, false, "error"),
    );
    expect(failed).toMatchObject({ stopped: "error", sustainableRate: null });
    expect(failed.steps).toHaveLength(1);
  });

  it("refuses options that cannot make a search", async () => {
    const { step } = stackWithCeiling(10);
    await expect(
      searchCapacity({ startRate: 0, factor: 2, tolerance: 0.1, maxSteps: 5 }, step),
    ).rejects.toThrow(RangeError);
    await expect(
      searchCapacity({ startRate: 10, factor: 1, tolerance: 0.1, maxSteps: 5 }, step),
    ).rejects.toThrow(RangeError);
    await expect(
      searchCapacity({ startRate: 10, factor: 2, tolerance: 0.1, maxSteps: 0 }, step),
    ).rejects.toThrow(RangeError);
  });
});

/** A measurement series: warmup sample at 0 s, then one sample per second with `lag(i)` ms and `rate` sent/s. */
function series(n: number, rate: number, lag: (i: number) => number): SeriesPoint[] {
  return Array.from(
    { length: n + 1 },
    (_, i) =>
      ({
        t: 1_000_000 + i * 1000,
        elapsedS: 1 + i,
        phase: i === 0 ? "warmup" : "measure",
        stored: i * rate,
        countQueryMs: 2,
        rowsPerSec: i ? rate : null,
        mibPerSec: null,
        lagMs: lag(i),
        sent: i * rate,
        accepted: i * rate,
        hosts: {},
      }) as SeriesPoint,
  );
}

/** 1000 events/s offered for 7 s (warmup 1 s + 6 s), one batch of 100 as slack, a 200 ms lag floor. */
const OFFER: StepOffer = {
  rate: 1000,
  offeredPerSec: 1000,
  loadSeconds: 7,
  slackEvents: 100,
  lagFloorMs: 200,
};

/** A run record with the fields judgeStep reads (`sent`: the ledger's, default all 7000 due). */
function record(
  o: {
    status?: RunRecord["status"];
    rows?: number;
    p99?: number | null;
    lost?: number;
    sent?: number;
    verdict?: "steady" | "saturated";
  } = {},
): RunRecord {
  return {
    runId: "20261201T000000Z-abcdef",
    status: o.status ?? "ok",
    error: null,
    summary: {
      rowsPerSecond: o.rows ?? 1000,
      lagP99Ms: 300,
      deliveryLatency:
        o.p99 === null
          ? { unavailable: "no stored-at" }
          : {
              p50Ms: 100,
              p99Ms: o.p99 ?? 400,
              maxMs: 500,
              rows: 5000,
              resolutionMs: 1,
              unstamped: 0,
              clock: "one clock",
            },
      saturation:
        o.verdict === "saturated"
          ? { state: "saturated", label: "saturated (backpressure)", beganS: 2, evidence: "…", samples: 6 }
          : { state: "steady", label: "steady", evidence: "…", samples: 6 },
    },
    ledger: { lost: o.lost ?? 0, rejected: 0, sent: o.sent ?? 7000 },
  } as unknown as RunRecord;
}

describe("judging one capacity step (run.json and series.jsonl)", () => {
  const flat = series(6, 1000, () => 300);

  it("sustains when nothing is lost, the offered rate is sent and stored, p99 and the lag slope are bounded and the verdict is steady", () => {
    const j = judgeStep(record(), flat, OFFER, DEFAULT_BOUNDS);
    expect(j).toMatchObject({
      ok: true,
      boundBy: [],
      sentPerSec: 1000,
      storedPerSec: 1000,
      deliveryP99Ms: 400,
      lagSlope: 0,
      verdict: "steady",
    });
  });

  it("names every bound a step broke, with the figures", () => {
    const growing = series(6, 1000, (i) => 300 + 400 * i); // 0.4 s of lag per second
    const j = judgeStep(
      record({ rows: 700, p99: 4000, lost: 3, sent: 6000, verdict: "saturated" }),
      growing,
      OFFER,
      DEFAULT_BOUNDS,
    );
    expect(j.ok).toBe(false);
    expect(j.boundBy).toEqual(["loss", "offered", "latency", "lag slope", "verdict"]);
    expect(j.lagSlope).toBeCloseTo(0.4, 6);
    expect(j.reasons.join("\n")).toMatch(
      /lost 3, rejected 0\nsent 6,000 of the 6,900 events due in 7\.0 s at 1,000\/s \(below 95 %\)\ndelivery p99 4,000 ms over the 2,000 ms bound\nlag grows 0\.400 s\/s, \+2,000 ms over the measurement \(bound 0\.05 s\/s beyond 200 ms\)\nverdict saturated \(backpressure\)/,
    );
  });

  it("an open loop that sent less than it offered is bound by `offered` even when what it sent arrived at once", () => {
    const j = judgeStep(
      record({ rows: 800, sent: 5600 }),
      series(6, 800, () => 300),
      OFFER,
      DEFAULT_BOUNDS,
    );
    expect(j.boundBy).toEqual(["offered"]);
    expect(j.reasons[0]).toBe("sent 5,600 of the 6,900 events due in 7.0 s at 1,000/s (below 95 %)");
    // one batch per connection still due at the end is the loop on time, not behind
    expect(judgeStep(record({ sent: 6560 }), flat, OFFER, DEFAULT_BOUNDS).ok).toBe(true);
  });

  it("a lag that saws within one batch period is no growth, however steep its slope", () => {
    const saw = series(6, 1000, (i) => 300 + 60 * i); // +0.06 s/s, +300 ms over 5 s
    expect(judgeStep(record(), saw, OFFER, DEFAULT_BOUNDS).boundBy).toEqual(["lag slope"]);
    expect(judgeStep(record(), saw, { ...OFFER, lagFloorMs: 500 }, DEFAULT_BOUNDS).ok).toBe(true);
  });

  it("falls back to the lag's p99 without a stored-at, and calls a step without a measurement an error", () => {
    const j = judgeStep(record({ p99: null }), flat, OFFER, { ...DEFAULT_BOUNDS, p99BoundMs: 250 });
    expect(j.boundBy).toEqual(["latency"]);
    expect(j.reasons[0]).toBe("lag p99 300 ms over the 250 ms bound");
    const e = judgeStep(
      {
        ...record({ status: "error" }),
        summary: null,
        ledger: null,
        error: { code: "E_PG_START", kind: "provisioning", message: "no\nmore" },
      } as unknown as RunRecord,
      [],
      OFFER,
      DEFAULT_BOUNDS,
    );
    expect(e).toMatchObject({ ok: false, boundBy: ["error"], reasons: ["E_PG_START: no"] });
  });
});

describe("capacity tables", () => {
  it("prints the curve per step, the result and the capacity ratio across stacks", async () => {
    const result = await searchCapacity(
      { startRate: 1000, factor: 2, tolerance: 0.2, maxSteps: 8 },
      stackWithCeiling(2500).step,
    );
    const file = (stack: string, scale = 1): CapacityFile => ({
      stack,
      scenario: "syslog-ng-postgres",
      scenarioFile: "scenarios/syslog-ng-postgres.yaml",
      cell: "default",
      invocation: "x",
      createdAt: "x",
      generator: "syslog",
      entries: scale,
      stepWarmupMs: 1000,
      stepDurationMs: 4000,
      bounds: DEFAULT_BOUNDS,
      search: { startRate: 1000, factor: 2, tolerance: 0.2, maxSteps: 8 },
      machine: null,
      result,
    });
    const text = renderCapacity(file("local-quarter-core"));
    expect(text).toMatch(
      /sustainable: 2,500 events\/s \(last good 2,500, first bad 3,000: within 20\.0 %\); broke at step 4 \(3,000\/s\) on latency: latency broke; stopped: converged/,
    );
    expect(text).toMatch(/│ 3 +│ ramp +│ 4,000 +│/);
    // the machine line names the kernel release once, not "kernel Linux …" (harness/results/format.ts kernelRelease)
    const machine: CapacityFile = {
      ...file("local-quarter-core"),
      machine: { cpuModel: "AMD EPYC", cores: 2, kernel: "Linux 6.18.44-fc-v1045" },
    };
    expect(renderCapacity(machine)).toMatch(/\nmeasured on AMD EPYC, 2 cores, kernel 6\.18\.44-fc-v1045$/);
    expect(kernelRelease("Linux 6.18.44")).toBe("6.18.44");
    expect(kernelRelease("6.18.44")).toBe("6.18.44");
    expect(stepLine(result.steps[2]!, 8)).toMatch(
      /^step 3\/8 ramp 4,000\/s offered: NOT sustained, latency: latency broke \(sent 4,000\/s, stored 3,200\/s, delivery p99 5,000 ms, lag \+0\.000 s\/s, saturated \(backpressure\)\)$/,
    );
    const cmp = renderCapacityComparison("syslog-ng-postgres", [
      { stack: "a", file: file("a") },
      { stack: "b", file: file("b", 2) },
      { stack: "c", file: null },
    ]);
    expect(cmp).toMatch(/│ a +│ 2,500 +│ \[2,500, 3,000\] +│ latency +│ 5 +│ 1\.00x +│/);
    expect(cmp).toMatch(/│ b +│ 5,000 +│ \[5,000, 6,000\] +│ latency +│ 5 +│ 2\.00x +│/);
    expect(cmp).toMatch(/│ c +│ – +│ – +│ no capacity\.json/);
    // the report's chart: offered vs sent and stored, p99 vs offered, per stack and step
    const spec = capacitySpec([file("a"), file("b", 2)]);
    expect(JSON.stringify(spec)).toContain('"offered":3000');
    expect(await renderSvg(spec!, "cap")).toMatch(/^<svg/);
    expect(capacitySpec([])).toBeNull();
  });

  it("compare --scenario <name>.capacity prints the search's curve (its steps are not replicates), or says no search was stored", async () => {
    const result = await searchCapacity(
      { startRate: 1000, factor: 2, tolerance: 0.2, maxSteps: 8 },
      stackWithCeiling(2500).step,
    );
    const root = mkdtempSync(path.join(os.tmpdir(), "ibtest-capacity-compare-"));
    try {
      await writeCapacity(root, {
        stack: "a",
        scenario: "syslog-ng-postgres",
        scenarioFile: "scenarios/syslog-ng-postgres.yaml",
        cell: "default",
        invocation: "x",
        createdAt: "x",
        generator: "syslog",
        entries: 1,
        stepWarmupMs: 1000,
        stepDurationMs: 4000,
        bounds: DEFAULT_BOUNDS,
        search: { startRate: 1000, factor: 2, tolerance: 0.2, maxSteps: 8 },
        machine: null,
        result,
      });
      const one = await compareCommand(root, { scenario: "syslog-ng-postgres.capacity", stacks: "a" });
      expect(one).toMatch(/sustainable: 2,500 events\/s/);
      expect(one).not.toMatch(/erratic|replicate/);
      expect(await compareCommand(root, { scenario: "syslog-ng-postgres.capacity", stacks: "a,b" })).toMatch(
        /│ b +│ – +│ – +│ no capacity\.json/,
      );
      await expect(
        compareCommand(root, { scenario: "syslog-ng-postgres.capacity", stacks: "b" }),
      ).rejects.toMatchObject({
        code: "E_NO_RESULTS",
        message: expect.stringMatching(
          /no capacity search of scenario "syslog-ng-postgres" on b .*ingestbench capacity --stack b/,
        ),
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("capacity command checks (before anything is provisioned)", () => {
  const scenarios = path.resolve(import.meta.dirname, "../../../scenarios");
  it("refuses a closed-loop scenario at its generator's rate (E_CAPACITY_CLOSED_LOOP), and a step too short for the verdict", () => {
    expect(() => capacityPlan(path.join(scenarios, "quickstart.yaml"), {})).toThrow(
      expect.objectContaining({
        code: "E_CAPACITY_CLOSED_LOOP",
        exitCode: 2,
        message: expect.stringMatching(
          /quickstart\.yaml:\d+:\d+: generator\.pg-copy\.rate: capacity searches the highest offered rate of an open-loop generator, .* its rate is "max"/,
        ),
      }),
    );
    expect(() =>
      capacityPlan(path.join(scenarios, "syslog-ng-postgres-capacity.yaml"), { stepDuration: "2s" }),
    ).toThrow(
      expect.objectContaining({
        code: "E_FLAG",
        message: expect.stringMatching(/at least 5 sampling intervals/),
      }),
    );
    expect(() => capacityPlan(path.join(scenarios, "syslog-ng-clickhouse-batch-sweep.yaml"), {})).toThrow(
      expect.objectContaining({
        code: "E_FLAG",
        message: expect.stringMatching(/has 12 cells: name the one to search with --cell/),
      }),
    );
    const plan = capacityPlan(path.join(scenarios, "syslog-ng-postgres-capacity.yaml"), {
      stepDuration: "4s",
      warmup: "1s",
    });
    expect(plan).toMatchObject({
      durationMs: 4000,
      warmupMs: 1000,
      intervalMs: 500,
      generator: { name: "syslog", config: { rate: 1000 } },
    });
  });
});

describe("capacity --help", () => {
  it("explains the search, its bounds and its flags", () => {
    const help = program()
      .commands.find((c) => c.name() === "capacity")!
      .helpInformation();
    for (const flag of [
      "--stack <name>",
      "--stacks <names>",
      "--start-rate <n>",
      "--factor <x>",
      "--tolerance <x>",
      "--max-steps <n>",
      "--step-duration <d>",
      "--p99-bound <d>",
      "--max-lag-slope <x>",
      "--cell <id>",
    ])
      expect(help).toContain(flag);
    expect(help).toMatch(/ramp from --start-rate/);
    expect(help).toMatch(/E_CAPACITY_CLOSED_LOOP, exit 2/);
  });
});
