// Delivery latency at the sink and the collector's signals as series, on real pipelines of the local platform, at low
// rates: syslog-ng 3.38 → PostgreSQL 18 and the clickhouse-http generator → ClickHouse 18.16. Asserted is what the
// sink and the series say (each row's latency read once, the syslog-ng counters in every sample, the verdict of an
// unhurried run), never a machine-speed number.
import { describe, expect, it } from "vitest";
import type { DeliverySummary, SeriesPoint } from "../../harness/results/types.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { expectCleanRun, readSeries } from "../helpers/pipeline-ledger.ts";

const STACK = "local-pipeline";

/** Σ rows over every window of the series (warmup included): each stored row is read by exactly one sample. */
const deliveredRows = (series: readonly SeriesPoint[]): number =>
  series.reduce((n, p) => n + (p.delivery?.rows ?? 0), 0);

function expectDelivery(d: unknown, resolutionMs: number): DeliverySummary {
  expect(d).toBeDefined();
  expect(d).not.toHaveProperty("unavailable");
  const s = d as DeliverySummary;
  expect(s.rows).toBeGreaterThan(0);
  expect(s.p50Ms).not.toBeNull();
  expect(s.p99Ms).not.toBeNull();
  expect(s.p99Ms!).toBeGreaterThanOrEqual(s.p50Ms!);
  expect(s.maxMs!).toBeGreaterThanOrEqual(s.p99Ms!);
  expect(s.resolutionMs).toBe(resolutionMs);
  expect(s.unstamped).toBe(0);
  expect(s.clock).toMatch(/^one clock/);
  return s;
}

describe("delivery latency and collector series (real syslog-ng, PostgreSQL, ClickHouse; low rates)", () => {
  it("syslog-ng → PostgreSQL: delivery p50/p99 in run.json over every stored row, syslog-ng's counters in every sample, steady", async () => {
    const run = newBenchRun(
      STACK,
      scenarioPlan("syslog-ng-postgres.yaml", { warmup: "1s", duration: "6s", generator: { rate: 2000 } }),
    );
    const record = await run.run();
    const l = expectCleanRun(record);
    const d = expectDelivery(record.summary!.deliveryLatency, 1);
    const series = readSeries(run);
    // PostgreSQL's windows read each committed row once: the windows add up to the ledger's stored rows, and the
    // run's figure rests on those after the warmup
    expect(deliveredRows(series)).toBe(l.stored);
    expect(d.rows).toBe(deliveredRows(series.filter((p) => p.phase !== "warmup")));
    for (const p of series.filter((x) => x.delivery))
      expect(p.delivery!.p99Ms).toBeGreaterThanOrEqual(p.delivery!.p50Ms);
    // syslog-ng-ctl stats in every sample, per destination, counters never going back
    const measured = series.filter((p) => p.phase !== "warmup");
    expect(measured.length).toBeGreaterThanOrEqual(5);
    let written = 0;
    for (const p of measured) {
      expect(p.collector?.name).toBe("syslog-ng");
      const c = p.collector!.hosts.collector!;
      expect(Object.keys(c)).toEqual(
        expect.arrayContaining([
          "s_ib.processed",
          "d_sink#0.processed",
          "d_sink#0.written",
          "d_sink#0.dropped",
          "d_sink#0.queued",
        ]),
      );
      expect(c["d_sink#0.written"]!).toBeGreaterThanOrEqual(written);
      written = c["d_sink#0.written"]!;
      expect(c["d_sink#0.dropped"]).toBe(0);
    }
    // after the drain, syslog-ng's written counter has reached what the sink stored (its claims say so too)
    expect(written).toBeLessThanOrEqual(l.stored);
    expect(record.summary!.saturation).toMatchObject({ state: "steady", label: "steady" });
    console.log(
      `syslog-ng-postgres at 2000/s: delivery p50 ${d.p50Ms} ms, p99 ${d.p99Ms} ms, max ${d.maxMs} ms over ${d.rows} rows; verdict ${record.summary!.saturation!.label}`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("clickhouse-http → ClickHouse 18.16: delivery p50/p99 in run.json at the whole-second stamp, no row read twice", async () => {
    const run = newBenchRun(
      STACK,
      scenarioPlan("clickhouse-direct.yaml", {
        warmup: "1s",
        duration: "6s",
        generator: { rate: 2000, batch: 500 },
      }),
    );
    const record = await run.run();
    const l = expectCleanRun(record);
    const d = expectDelivery(record.summary!.deliveryLatency, 1000);
    // settled after the load by stored_at: a row stamped in the last sample's own second is in no window of the
    // series, but in the run's figure; never a row twice, none missed
    const series = readSeries(run);
    expect(deliveredRows(series)).toBeLessThanOrEqual(l.stored);
    expect(deliveredRows(series)).toBeGreaterThan(0);
    expect(deliveredRows(series.filter((p) => p.phase === "warmup")) + d.rows).toBe(l.stored);
    expect(record.summary!.saturation?.state).toBe("steady");
    console.log(
      `clickhouse-direct at 2000/s: delivery p50 ${d.p50Ms} ms, p99 ${d.p99Ms} ms over ${d.rows} of ${l.stored} rows (1 s stamps); verdict ${record.summary!.saturation!.label}`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
