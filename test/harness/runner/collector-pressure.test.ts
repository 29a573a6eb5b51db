// The collector's flush and queue counters read for the saturation verdict (harness/runner/collector-pressure.ts,
// harness/runner/saturation.ts). Fluentd is not installed in CI: its part runs on vectors recorded from a real Fluentd
// 1.12.0 (test/vectors/README.md): monitor_agent's bodies as served, and the run's own measurement samples
// (series.jsonl), of scenarios/fluentd-clickhouse-saturation.yaml's two cells. The OTel Collector's and Fluent Bit's
// parts run on their signals' names (their components' own tests read the real programs' payloads).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { collectorPressure, NEAR_LIMIT, runPressure } from "../../../harness/runner/collector-pressure.ts";
import { saturationVerdict, verdictPoints } from "../../../harness/runner/saturation.ts";
import type { SeriesPoint } from "../../../harness/results/types.ts";
import { fluentdPressure, parseMonitorAgentSignals } from "../../../plugins/collectors/fluentd/claims.ts";
import { fluentBitPressure } from "../../../plugins/collectors/fluent-bit/claims.ts";
import { otelcolPressure } from "../../../plugins/collectors/otelcol/component.ts";

const VECTORS = fileURLToPath(new URL("../../vectors/fluentd-1.12.0/", import.meta.url));
const lines = (file: string): unknown[] =>
  readFileSync(`${VECTORS}${file}`, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as unknown);
const series = (cell: string): SeriesPoint[] => lines(`${cell}.series.jsonl`) as SeriesPoint[];
const bodies = (cell: string): Array<{ at: string; body: string }> =>
  lines(`${cell}.monitor-agent.jsonl`) as Array<{ at: string; body: string }>;
const NAMES = { collector: "fluentd", sink: "clickhouse" };
const verdictOf = (s: SeriesPoint[]) => {
  const pressure = collectorPressure(s, fluentdPressure, NAMES);
  return saturationVerdict(verdictPoints(s), pressure ? { pressure } : {});
};

describe("monitor_agent's flush counters, recorded from a real Fluentd 1.12.0", () => {
  it("recorded from a real Fluentd 1.12.0 at a rate it cannot hold: slow_flush_count and flush_time_count rise, the buffer reaches total_limit_size", () => {
    const read = bodies("saturated").map((b) => parseMonitorAgentSignals(b.body));
    expect(read.length).toBeGreaterThanOrEqual(30);
    const slow = read.map((r) => r["ib_sink.slow_flush_count"]!);
    const flushMs = read.map((r) => r["ib_sink.flush_time_count"]!);
    // cumulative counters: never fall, and rose over the measurement
    for (let i = 1; i < read.length; i++) {
      expect(slow[i]).toBeGreaterThanOrEqual(slow[i - 1]!);
      expect(flushMs[i]).toBeGreaterThanOrEqual(flushMs[i - 1]!);
    }
    expect(slow.at(-1)! - slow[0]!).toBeGreaterThan(0);
    expect(flushMs.at(-1)! - flushMs[0]!).toBeGreaterThan(0);
    // the null output of Fluentd's own log events is no output toward the sink
    const last = fluentdPressure(read.at(-1)!);
    expect(last.map((p) => p.output)).toEqual(["ib_sink"]);
    expect(last[0]!.queueUsed).toBeGreaterThanOrEqual(NEAR_LIMIT);
    expect(last[0]).toMatchObject({ queuedUnit: "bytes", retries: 0 });
  });

  it("recorded from a real Fluentd 1.12.0: the bodies parse into the very signal keys the run's series kept", () => {
    const fromBody = Object.keys(parseMonitorAgentSignals(bodies("saturated")[0]!.body)).sort();
    const fromSeries = Object.keys(series("saturated")[0]!.collector!.hosts.collector!).sort();
    expect(fromBody).toEqual(fromSeries);
    expect(fromBody).toContain("ib_sink.slow_flush_count");
    expect(fromBody).toContain("ib_sink.flush_time_count");
  });
});

describe("the saturation verdict on the collector's counters, recorded from a real Fluentd 1.12.0", () => {
  it("recorded from a real Fluentd 1.12.0 at a rate it cannot hold: saturated, citing flush time, slow flushes and the full queue of the output toward the sink", () => {
    const s = series("saturated");
    const v = verdictOf(s);
    expect(v.state).toBe("saturated");
    // the latency grew too (delivery p50 and lag): that verdict, with the collector's counters as where it came from
    expect(v.label).toBe("saturated (backpressure)");
    expect(v.evidence).toMatch(
      /no errors; backpressure from fluentd's output ib_sink toward clickhouse: flush time \d+\.\d s \(\d+\.\d s at the start\), \d+ slow flushes, queue at its limit/,
    );
    // the figures are the series' own counters over the measurement
    const sink = (p: SeriesPoint, k: string) => p.collector!.hosts.collector![`ib_sink.${k}`]!;
    expect(v.collector!.slowFlushes).toBe(
      sink(s.at(-1)!, "slow_flush_count") - sink(s[0]!, "slow_flush_count"),
    );
    expect(v.collector!.slowFlushes).toBeGreaterThan(0);
    expect(v.collector!.flushMs).toBeGreaterThan(1000); // the scenario's 1.0 s slow_flush_log_threshold was crossed
    expect(v.collector!.queueUsed).toBeGreaterThanOrEqual(NEAR_LIMIT);
  });

  it("recorded from a real Fluentd 1.12.0 at a rate it cannot hold, without latency readings: the counters alone say saturated (collector backpressure); without them, steady", () => {
    const s = series("saturated");
    // as a sink that stamps no stored-at time and a lag that is not read: only rows/s and the counters are left
    const blind = verdictPoints(s).map((p) => ({ ...p, deliveryP50Ms: null, lagMs: null }));
    expect(saturationVerdict(blind).state).toBe("steady");
    const pressure = collectorPressure(s, fluentdPressure, NAMES)!;
    const v = saturationVerdict(blind, { pressure });
    expect(v.label).toBe("saturated (collector backpressure)");
    expect(v.evidence).toMatch(
      /^flush time \d+\.\d s .*, \d+ slow flushes, queue at its limit.*, no errors: backpressure from fluentd's output ib_sink toward clickhouse$/,
    );
    // from the first slow flush or full queue the counters show, inside the measurement
    expect(v.beganS).toBeGreaterThanOrEqual(s[0]!.elapsedS);
    expect(v.beganS).toBeLessThanOrEqual(s.at(-1)!.elapsedS);
  });

  it("recorded from a real Fluentd 1.12.0 at a rate it holds: steady, the counters cited as keeping up", () => {
    const s = series("held");
    const p = collectorPressure(s, fluentdPressure, NAMES)!;
    expect(p.saturated).toBe(false);
    expect(p.figures.slowFlushes).toBe(0);
    expect(p.figures.queueUsed).toBeLessThan(NEAR_LIMIT);
    const v = verdictOf(s);
    expect(v.state).toBe("steady");
    expect(v.evidence).toMatch(
      /; fluentd's output ib_sink: flush time \d+\.\d s( \([^)]*\))?, 0 slow flushes, queue not growing/,
    );
    expect(v.collector).toMatchObject({
      name: "fluentd",
      output: "ib_sink",
      saturated: false,
      slowFlushes: 0,
    });
  });

  it("recorded from a real Fluentd 1.12.0: runPressure finds the plugin the series names (fluentd) in the registry", () => {
    const s = series("saturated");
    expect(runPressure(s, "clickhouse")).toEqual(collectorPressure(s, fluentdPressure, NAMES));
    expect(runPressure(s.map(({ collector: _c, ...rest }) => rest as SeriesPoint))).toBeUndefined();
  });
});

/** n samples one second apart whose collector host `c` reports `f(i)`. */
const synthetic = (name: string, n: number, f: (i: number) => Record<string, number>): SeriesPoint[] =>
  Array.from(
    { length: n },
    (_, i) =>
      ({
        elapsedS: i + 1,
        rowsPerSec: 10_000,
        lagMs: 50,
        collector: { name, hosts: { c: f(i) } },
      }) as unknown as SeriesPoint,
  );

describe("the OTel Collector's and Fluent Bit's queues (their signals' names)", () => {
  it("otelcol: an exporter queue filling to queue_capacity is saturated; send_failed counted", () => {
    const s = synthetic("otelcol", 12, (i) => ({
      "clickhouse.queue_size": Math.min(1000, 100 * i),
      "clickhouse.queue_capacity": 1000,
      "clickhouse.sent": 5000 * i,
      "clickhouse.send_failed": 0,
      "fluentforward.accepted": 6000 * i,
    }));
    expect(otelcolPressure(s[11]!.collector!.hosts.c!)).toEqual([
      { output: "clickhouse", queued: 1000, queuedUnit: "items", queueUsed: 1, sendFailures: 0 },
    ]);
    const p = collectorPressure(s, otelcolPressure, { collector: "otelcol", sink: "clickhouse" })!;
    // the median of the last third (800–1,000 of 1,000) is the used share; it began at the first sample ≥ 90 %
    expect(p).toMatchObject({ saturated: true, output: "clickhouse", beganS: 10 });
    expect(p.evidence).toBe("queue at its limit and growing (95 % used, 1,000 queued)");
    const v = saturationVerdict(verdictPoints(s), { pressure: p });
    expect(v.evidence).toBe(
      "queue at its limit and growing (95 % used, 1,000 queued), no errors: backpressure from otelcol's output clickhouse toward clickhouse",
    );
  });

  it("Fluent Bit: an output whose chunk capacity stays free is not saturated; retries counted", () => {
    const s = synthetic("fluent-bit", 10, (i) => ({
      "output.http.0.proc_records": 1000 * i,
      "output.http.0.retries": i < 5 ? 0 : 2,
      "output.http.0.errors": 0,
      "fluentbit_output_chunk_available_capacity_percent.http.0": 97,
    }));
    const p = collectorPressure(s, fluentBitPressure, { collector: "fluent-bit" })!;
    expect(p.saturated).toBe(false);
    expect(p.evidence).toBe("queue not growing (3 % used), 2 retries");
    expect(p.where).toBe("fluent-bit's output http.0");
  });
});
