// Delivery-latency windowing (harness/runner/delivery.ts): per-window percentiles from the sink's histogram buckets,
// the run's figure over the counted windows only, negative latencies clamped and counted.
import { describe, expect, it } from "vitest";
import { DeliveryLatency, deliveryClock } from "../../../harness/runner/delivery.ts";

describe("delivery latency windows (hdr histograms)", () => {
  it("gives each window its own p50, p99 and max, and the run's figure over the counted windows with the rows it rests on", () => {
    const d = new DeliveryLatency();
    // a warmup window (not counted), then two measured windows: 98 rows at 10 ms and 2 at 900 ms; then 100 rows at 2000 ms
    const warm = d.window({ buckets: [[5000, 50]], resolutionMs: 1, unstamped: 0 }, false);
    // 3 significant digits: a value is read back as the top of its bucket (5000 → 5003), within 0.1 %
    expect(warm!.rows).toBe(50);
    for (const v of [warm!.p50Ms, warm!.p99Ms, warm!.maxMs])
      expect(Math.abs(v - 5000)).toBeLessThanOrEqual(5);
    const w1 = d.window(
      {
        buckets: [
          [10, 98],
          [900, 2],
        ],
        resolutionMs: 1,
        unstamped: 0,
      },
      true,
    );
    expect(w1).toEqual({ rows: 100, p50Ms: 10, p99Ms: 900, maxMs: 900 });
    const w2 = d.window({ buckets: [[2000, 100]], resolutionMs: 1, unstamped: 2 }, true);
    expect(w2!.rows).toBe(100);
    expect(Math.abs(w2!.p50Ms - 2000)).toBeLessThanOrEqual(2);
    const s = d.summary("one clock");
    expect(s).toMatchObject({ rows: 200, resolutionMs: 1, unstamped: 2, belowZero: 0, clock: "one clock" });
    // 98 rows at 10 ms, 2 at 900, 100 at 2000 (the warmup's 5000 ms not among them): the median is the 100th row
    // (900 ms), p99 in the 2000 ms half
    expect(s.p50Ms).toBe(900);
    expect(Math.abs(s.p99Ms! - 2000)).toBeLessThanOrEqual(2);
    expect(Math.abs(s.maxMs! - 2000)).toBeLessThanOrEqual(2);
  });

  it("a window without rows is null and leaves the run's figure alone; an empty run has null percentiles and 0 rows", () => {
    const d = new DeliveryLatency();
    expect(d.window({ buckets: [], resolutionMs: 1000, unstamped: 0 }, true)).toBeNull();
    expect(d.summary("c")).toMatchObject({
      rows: 0,
      p50Ms: null,
      p99Ms: null,
      maxMs: null,
      resolutionMs: 1000,
    });
  });

  it("records a latency below 0 (clock or whole-second stamp) as 0 and counts it", () => {
    const d = new DeliveryLatency();
    const w = d.window(
      {
        buckets: [
          [-300, 4],
          [200, 6],
        ],
        resolutionMs: 1000,
        unstamped: 0,
      },
      true,
    );
    expect(w).toMatchObject({ rows: 10, maxMs: 200 });
    expect(d.summary("c")).toMatchObject({ rows: 10, belowZero: 4, resolutionMs: 1000 });
  });

  it("percentiles are those of the rows, not of the buckets (weighted by count)", () => {
    const d = new DeliveryLatency();
    const buckets: Array<[number, number]> = Array.from({ length: 100 }, (_, i) => [
      i + 1,
      i === 0 ? 1000 : 1,
    ]);
    const w = d.window({ buckets, resolutionMs: 1, unstamped: 0 }, true)!;
    expect(w.rows).toBe(1099);
    expect(w.p50Ms).toBe(1);
    expect(w.maxMs).toBe(100);
  });

  it("says which clocks the latency is on, per platform", () => {
    expect(deliveryClock("local")).toMatch(/^one clock/);
    expect(deliveryClock("docker")).toMatch(/^one clock/);
    expect(deliveryClock("azure")).toMatch(/^uncorrected/);
    expect(
      deliveryClock("azure", { reason: "the sink host's clock offset was not measured (no date)" }),
    ).toMatch(/^uncorrected: the sink host's clock offset was not measured \(no date\)/);
    expect(deliveryClock("azure", { correctionMs: 1234.5, boundMs: 12.25 })).toMatch(
      /^corrected: .*1234\.5 ms ± 12\.3 ms/,
    );
  });

  it("a sink clock 5 s ahead of the loadgen's: the correction moves every row back onto the generator's clock", () => {
    const d = new DeliveryLatency();
    d.correct(5000);
    const w = d.window(
      {
        buckets: [
          [5040, 3],
          [5100, 1],
          [4990, 2],
        ],
        resolutionMs: 1,
        unstamped: 0,
      },
      true,
    )!;
    expect(w).toEqual({ rows: 6, p50Ms: 40, p99Ms: 100, maxMs: 100 });
    // a row the corrected clock puts before its send is clamped to 0 and counted
    expect(d.summary("x").belowZero).toBe(2);
  });
});
