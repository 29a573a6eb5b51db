// The saturation verdict on synthetic series (harness/runner/saturation.ts): what backpressure, oscillation,
// rejections and a steady run look like in the samples, and the edges between them.
import { describe, expect, it } from "vitest";
import {
  binnedPoints,
  oscillationBound,
  saturationVerdict,
  TREND_POINTS,
  type VerdictPoint,
} from "../../../harness/runner/saturation.ts";

/** n samples one second apart from elapsedS 1, with rows/s, delivery p50, lag and cumulative errors from functions of i. */
function series(
  n: number,
  f: {
    rate?: (i: number) => number | null;
    delivery?: (i: number) => number | null;
    lag?: (i: number) => number | null;
    errors?: (i: number) => number;
  },
): VerdictPoint[] {
  return Array.from({ length: n }, (_, i) => ({
    elapsedS: i + 1,
    rowsPerSec: f.rate ? f.rate(i) : 10_000,
    deliveryP50Ms: f.delivery ? f.delivery(i) : 40,
    lagMs: f.lag ? f.lag(i) : 60,
    errors: f.errors ? f.errors(i) : 0,
  }));
}

/** deterministic jitter in [-0.9, 0.9]: a hash of i, with no period */
const jitter = (i: number): number => {
  let h = Math.imul(i + 0x9e3779b9, 0x85ebca6b) ^ 0xc2b2ae35;
  h = Math.imul(h ^ (h >>> 13), 0x27d4eb2d);
  return (((h ^ (h >>> 16)) >>> 0) / 2 ** 32) * 1.8 - 0.9;
};

describe("saturation verdict (synthetic series)", () => {
  it("a flat run with noise is steady", () => {
    const v = saturationVerdict(
      series(20, {
        rate: (i) => 10_000 + 300 * jitter(i),
        delivery: (i) => 40 + 10 * jitter(i + 3),
        lag: (i) => 60 + 15 * jitter(i + 7),
      }),
    );
    expect(v.state).toBe("steady");
    expect(v.label).toBe("steady");
    expect(v.samples).toBe(20);
  });

  it("latency and lag growing from a point on while rows/s stay flat and nothing errs: saturated (backpressure), with when it began", () => {
    // flat for 8 s, then both latencies climb ~400 ms/s; the sink keeps storing ~12k rows/s
    const climb = (i: number, base: number): number =>
      i < 8 ? base + 5 * jitter(i) : base + 400 * (i - 7) + 20 * jitter(i);
    const v = saturationVerdict(
      series(24, {
        rate: (i) => 12_000 + 400 * jitter(i),
        delivery: (i) => climb(i, 50),
        lag: (i) => climb(i, 80),
      }),
    );
    expect(v.state).toBe("saturated");
    expect(v.label).toBe("saturated (backpressure)");
    // it began at the knee (the climb's first sample is elapsedS 9), not at the start
    expect(v.beganS).toBeGreaterThanOrEqual(8);
    expect(v.beganS).toBeLessThanOrEqual(10);
    expect(v.evidence).toMatch(/delivery p50 \+\d[\d,]* ms\/s/);
    expect(v.evidence).toMatch(/lag \+/);
    expect(v.evidence).toMatch(/rows\/s, flat/);
  });

  it("growing latency while the lag stays flat is not saturation (both must grow)", () => {
    const v = saturationVerdict(
      series(20, { delivery: (i) => 50 + 300 * i, lag: (i) => 60 + 10 * jitter(i) }),
    );
    expect(v.state).toBe("steady");
  });

  it("growing latency while throughput falls by half is backpressure too (the sink takes less than it is offered), never steady", () => {
    const v = saturationVerdict(
      series(20, { rate: (i) => 20_000 - 600 * i, delivery: (i) => 50 + 300 * i, lag: (i) => 60 + 300 * i }),
    );
    expect(v.state).toBe("saturated");
    expect(v.evidence).toMatch(/rows\/s, falling/);
  });

  it("latency growing while rows/s rise but do not keep up is saturated too: more arrives than the sink takes", () => {
    const v = saturationVerdict(
      series(12, {
        rate: (i) => 8_000 + 900 * i,
        delivery: (i) => 1000 + 650 * i,
        lag: (i) => 2400 + 600 * i,
      }),
    );
    expect(v.state).toBe("saturated");
    expect(v.evidence).toMatch(/rising but not keeping up/);
  });

  it("a latency that grows but stays small (less than doubling, under 200 ms) is steady", () => {
    const v = saturationVerdict(series(20, { delivery: (i) => 100 + 3 * i, lag: (i) => 100 + 3 * i }));
    expect(v.state).toBe("steady");
  });

  it("with delivery latency unmeasured (a sink without stored-at), the lag alone decides", () => {
    const v = saturationVerdict(series(20, { delivery: () => null, lag: (i) => 80 + 500 * i }));
    expect(v.state).toBe("saturated");
    expect(v.evidence).not.toMatch(/delivery/);
  });

  it("rows/s swinging with a period: oscillating (min–max)", () => {
    // write-up 000's 120k–190k rows/s, a period of 6 samples
    const v = saturationVerdict(
      series(30, { rate: (i) => 155_000 + 35_000 * Math.sin((2 * Math.PI * i) / 6) }),
    );
    expect(v.state).toBe("oscillating");
    expect(v.label).toMatch(/^oscillating \(1\d\d,\d{3}–1\d\d,\d{3} rows\/s\)$/);
    expect(v.evidence).toMatch(/period of about 6\.0 s/);
  });

  it("a wide but random swing is not oscillating", () => {
    const v = saturationVerdict(series(30, { rate: (i) => 155_000 + 35_000 * jitter(i * 7 + 1) }));
    expect(v.state).toBe("steady");
  });

  it("six samples of a batched pipeline that keeps up, swinging ±25 % with r = 0.54 at lag 2: steady (the chance bound for six samples is 0.78)", () => {
    // the shape CI saw on syslog-ng batch-lines 1000 → ClickHouse at 2,000 rows/s offered: one or two inserts a second
    const rates = [2505, 1498, 2400, 1700, 2200, 2003];
    const v = saturationVerdict(series(6, { rate: (i) => rates[i]! }));
    expect(v.state).toBe("steady");
    expect(oscillationBound(6, 1)).toBeCloseTo(0.783, 3);
    // the same shape over 30 samples is more than chance: oscillating
    expect(saturationVerdict(series(30, { rate: (i) => rates[i % 6]! })).state).toBe("oscillating");
  });

  it("an hour of one-second samples (a soak): the saturation search reads TREND_POINTS runs of them, so it finishes (the pairwise search took minutes and ~0.7 GB) and still finds a climb, to within a run's length", () => {
    expect(
      saturationVerdict(
        series(3600, {
          rate: (i) => 5000 + 200 * jitter(i),
          delivery: (i) => 40 + 10 * jitter(i + 3),
          lag: (i) => 60 + 15 * jitter(i + 7),
        }),
      ).state,
    ).toBe("steady");
    // flat for 2000 s, then both latencies climb 50 ms/s while the sink keeps storing ~5k rows/s
    const climb = (i: number, base: number): number =>
      i < 2000 ? base + 5 * jitter(i) : base + 50 * (i - 1999) + 20 * jitter(i);
    const v = saturationVerdict(
      series(3600, {
        rate: (i) => 5000 + 200 * jitter(i),
        delivery: (i) => climb(i, 50),
        lag: (i) => climb(i, 80),
      }),
    );
    expect(v.state).toBe("saturated");
    expect(v.samples).toBe(3600);
    expect(Math.abs(v.beganS! - 2001)).toBeLessThanOrEqual(3600 / TREND_POINTS);
    // 10 samples become 4 points (runs of 2, 3, 2, 3): mean time and rows/s, median latencies, the last error count
    const b = binnedPoints(
      series(10, { rate: (i) => i, delivery: (i) => (i === 0 ? null : 10 * i), errors: (i) => i }),
      4,
    );
    expect(b.map((p) => [p.elapsedS, p.rowsPerSec, p.deliveryP50Ms, p.errors])).toEqual([
      [1.5, 0.5, 10, 1],
      [4, 3, 30, 4],
      [6.5, 5.5, 55, 6],
      [9, 8, 80, 9],
    ]);
  });

  it("errors or rejections rising during the measurement: rejecting, before any latency reading", () => {
    const v = saturationVerdict(
      series(20, {
        errors: (i) => (i > 10 ? (i - 10) * 500 : 0),
        delivery: (i) => 50 + 300 * i,
        lag: (i) => 60 + 300 * i,
      }),
    );
    expect(v.state).toBe("rejecting");
    expect(v.evidence).toMatch(/4,500 errors or rejections/);
  });

  it("errors from before the measurement do not count: only their rise", () => {
    const v = saturationVerdict(series(10, { errors: () => 7 }));
    expect(v.state).toBe("steady");
  });

  it("too few samples: undetermined, naming how many", () => {
    expect(saturationVerdict(series(3, {}))).toMatchObject({
      state: "undetermined",
      label: "undetermined (3 samples)",
      samples: 3,
    });
  });
});

describe("a generator behind its offered rate (the issue's syslog-ng → ClickHouse at a throttled sink)", () => {
  // TCP backpressure held the sender back, so the lag stopped growing: latency alone would say steady
  const flat = series(20, { rate: (i) => 15_877 + 200 * jitter(i), lag: (i) => 3800 + 50 * jitter(i + 5) });

  it("is saturated, with the offered and sent rates and what bound the run as evidence", () => {
    const v = saturationVerdict(flat, {
      behind: { offeredPerSec: 100_000, sentPerSec: 21_000, boundBy: "cpu (sink)" },
    });
    expect(v.state).toBe("saturated");
    expect(v.label).toBe("saturated (behind its offered rate)");
    expect(v.evidence).toBe(
      "the generators sent 21,000 of the 100,000 events/s offered (79 % behind), no errors: the pipeline pushed back on them; bound by cpu (sink)",
    );
  });

  it("a run within 10 % of its offered rate stays steady; errors still say rejecting first", () => {
    expect(
      saturationVerdict(flat, { behind: { offeredPerSec: 2000, sentPerSec: 1850, boundBy: "client" } }).state,
    ).toBe("steady");
    const withErrors = series(20, { errors: (i) => i });
    expect(
      saturationVerdict(withErrors, { behind: { offeredPerSec: 2000, sentPerSec: 100, boundBy: "x" } }).state,
    ).toBe("rejecting");
  });
});

describe("the collector's flush and queue counters (harness/runner/collector-pressure.ts)", () => {
  const flat = series(20, { rate: (i) => 2000 + 50 * jitter(i), lag: (i) => 900 + 30 * jitter(i + 5) });
  const figures = {
    flushMs: 26_000,
    flushMsAtStart: 1000,
    slowFlushes: 12,
    queueUsed: 0.97,
    queued: 8_000_000,
    queuedUnit: "bytes" as const,
    retries: 0,
    sendFailures: null,
  };
  const pressure = {
    collector: "fluentd",
    output: "ib_sink",
    saturated: true,
    beganS: 42,
    evidence: "flush time 26.0 s (1.0 s at the start, growing), 12 slow flushes, queue at its limit",
    where: "fluentd's output ib_sink toward griddb",
    figures,
  };

  it("saturate a run whose latency and rate look flat, from where they began, naming the output; before the generator's rate", () => {
    const v = saturationVerdict(flat, {
      pressure,
      behind: { offeredPerSec: 20_000, sentPerSec: 2000, boundBy: "latency" },
    });
    expect(v).toMatchObject({ state: "saturated", label: "saturated (collector backpressure)", beganS: 42 });
    expect(v.evidence).toBe(
      "flush time 26.0 s (1.0 s at the start, growing), 12 slow flushes, queue at its limit, the generators sent 2,000 of the 20,000 events/s offered, no errors: backpressure from fluentd's output ib_sink toward griddb",
    );
    expect(v.collector).toEqual({ name: "fluentd", output: "ib_sink", saturated: true, ...figures });
  });

  it("are cited, not decisive, when they say it keeps up; errors still say rejecting", () => {
    const calm = { ...pressure, saturated: false, evidence: "flush time 0.1 s, 0 slow flushes" };
    const v = saturationVerdict(flat, { pressure: calm });
    expect(v.state).toBe("steady");
    expect(v.evidence).toMatch(
      /no errors over 20 samples; fluentd's output ib_sink: flush time 0\.1 s, 0 slow flushes$/,
    );
    expect(saturationVerdict(series(20, { errors: (i) => i }), { pressure }).state).toBe("rejecting");
  });
});
