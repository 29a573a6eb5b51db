/**
 * The report's spec builders on synthetic results (./fixtures.ts, figures known by construction): what each chart
 * charts (the data handed to vega-lite), that the rendered SVG carries those marks, and the answer in words.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerLines, intervalText } from "../../../harness/report/answer.ts";
import { capRows, capsSpec } from "../../../harness/report/charts/caps.ts";
import { mibPoints, mibSpec } from "../../../harness/report/charts/mib.ts";
import {
  collectorPoints,
  collectorSignalsSpec,
  sinkPoints,
  sinkSignalsSpec,
} from "../../../harness/report/charts/signals.ts";
import { storageBars, storageSpec } from "../../../harness/report/charts/storage.ts";
import { sweepCells, sweepSpec, sweptStacks } from "../../../harness/report/charts/sweep.ts";
import { loadReportData, type ReportData, type ScenarioReport } from "../../../harness/report/data.ts";
import { renderSvg } from "../../../harness/report/render.ts";
import { compareSamples } from "../../../harness/stats/compare.ts";
import {
  BATCHES,
  svgMarks,
  writePipelineResults,
  writeSyntheticResults,
  writeSyntheticRun,
} from "./fixtures.ts";

let root = "";
let data: ReportData;
const scenario = (name: string): ScenarioReport => data.scenarios.find((s) => s.scenario === name)!;
/** The sweep fixture's rows/s (fixtures.ts writeSyntheticResults). */
const sweepRate = (base: number, batch: number, replicate: number): number =>
  base * (1 + Math.log10(batch / 1000)) + replicate * 100;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-charts-"));
  writeSyntheticResults(root);
  writePipelineResults(root);
  data = await loadReportData(root);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("resources against caps", () => {
  it("per stack, each host's resources as shares of the applied caps, the bound one named by the verdict", () => {
    const rows = capRows(scenario("replay"));
    expect([...new Set(rows.map((r) => r.facet))]).toEqual([
      "fluentd — bound: cpu (collector)",
      "otelcol — bound: cpu (collector)",
    ]);
    const fluentd = rows.filter((r) => r.stack === "fluentd");
    // pipeline order, every resource of every observed host
    expect([...new Set(fluentd.map((r) => r.host))]).toEqual(["loadgen", "collector", "sink"]);
    expect(fluentd).toHaveLength(3 * 6);
    const at = (host: string, resource: string) =>
      fluentd.find((r) => r.host === host && r.resource === resource)!;
    // the collector: 0.24 of its 0.25 cores, throttled 8 of 10 periods (the verdict's), waited 300 ms/s for 240 ms/s of CPU
    expect(at("collector", "CPU used")).toMatchObject({ threshold: null, state: "CPU use", bound: 0 });
    expect(at("collector", "CPU used").share).toBeCloseTo(0.24 / 0.25, 9);
    expect(at("collector", "CPU throttled")).toMatchObject({
      share: 0.8,
      threshold: 0.5,
      state: "bound",
      bound: 3,
      runs: 3,
      label: "80 % bound",
    });
    expect(at("collector", "CPU wait").share).toBeCloseTo(300 / 540, 9);
    expect(at("collector", "CPU wait")).toMatchObject({ threshold: 0.3, state: "over threshold" });
    expect(at("collector", "memory").share).toBeCloseTo(1.9 / 2, 9);
    expect(at("collector", "memory")).toMatchObject({ threshold: 0.85, state: "over threshold" });
    // the sink's link: 6 MB/s in its busiest windows of a 12.5 MB/s (100 Mbit/s) cap
    expect(at("sink", "network").share).toBeCloseTo(6e6 / 12.5e6, 9);
    expect(at("sink", "network")).toMatchObject({ threshold: 0.85, state: "under threshold" });
    // no cap is said, never drawn as a share
    for (const [host, resource] of [
      ["collector", "network"],
      ["collector", "disk"],
      ["loadgen", "memory"],
      ["sink", "disk"],
    ] as const)
      expect(at(host, resource)).toMatchObject({ share: null, state: "no cap", label: "no cap" });
    expect(at("sink", "CPU wait")).toMatchObject({ share: null, state: "not read" });
  });

  it("a CPU cap at the machine's cores is no cap, even on the host the verdict named; a stack without a usable run has no facet", () => {
    const rows = capRows(scenario("plain"));
    expect([...new Set(rows.map((r) => r.group))]).toEqual(["medium", "large"]);
    const large = rows.find((r) => r.group === "large" && r.host === "sink" && r.resource === "CPU used")!;
    expect(large).toMatchObject({ share: null, state: "bound", label: "no cap (bound)" });
    const medium = rows.find((r) => r.group === "medium" && r.host === "sink" && r.resource === "CPU used")!;
    // the fixture's sink used 0.12..0.15 cores in the measure windows (mean 0.135) of its 1-core cap
    expect(medium.share).toBeCloseTo(0.135, 9);
  });

  it("renders a bar per share, a rule per threshold and 'no cap' in words", async () => {
    const rows = capRows(scenario("replay"));
    const svg = await renderSvg(capsSpec(scenario("replay"))!, "t");
    const m = svgMarks(svg);
    expect(m.bars).toBe(rows.filter((r) => r.share !== null).length);
    expect(m.ticks).toBe(rows.filter((r) => r.threshold !== null).length);
    expect(svg.split(">no cap<").length - 1).toBe(rows.filter((r) => r.label === "no cap").length);
    expect(svg).toContain("fluentd");
    expect(svg).toContain("bound: cpu (collector)");
  });
});

describe("a sweep's curve", () => {
  it("per cell the median and range of its runs, the step from the previous cell with its interval, best and saturating cell marked", () => {
    const small = sweptStacks(scenario("sweep")).find((x) => x.stack === "small")!;
    const { sweep, cells } = sweepCells(small.rows);
    expect(cells.map((c) => c.cell)).toEqual(BATCHES.map((b) => `batch=${b}`));
    for (const [i, b] of BATCHES.entries()) {
      expect(cells[i]!.min).toBeCloseTo(sweepRate(20_000, b, 1), 6);
      expect(cells[i]!.max).toBeCloseTo(sweepRate(20_000, b, 2), 6);
      expect(cells[i]!.median).toBeCloseTo((sweepRate(20_000, b, 1) + sweepRate(20_000, b, 2)) / 2, 6);
      expect(cells[i]!.runs).toBe(2);
    }
    expect(cells.map((c) => c.mark)).toEqual(["", "", "best, saturates"]);
    expect(sweep.knee).toBeNull();
    expect(cells[0]!.step).toBeNull();
    const c = compareSamples(
      [sweepRate(20_000, 1000, 1), sweepRate(20_000, 1000, 2)],
      [sweepRate(20_000, 8000, 1), sweepRate(20_000, 8000, 2)],
    );
    expect(cells[1]!.step).toBeCloseTo(c.ratio, 9);
    expect([cells[1]!.stepLow, cells[1]!.stepHigh]).toEqual(c.ci);
  });

  it("a knee where the next cell does not rise, drawn with a point per run and per step", async () => {
    const dir = path.join(root, "knee");
    for (const [cell, rate] of [
      ["n=1", 100],
      ["n=2", 200],
      ["n=4", 202],
    ] as const)
      writeSyntheticRun(dir, {
        stack: "one",
        scenario: "k",
        invocation: "2026-11-29T10:00:00.000Z",
        cell,
        cellValues: { n: Number(cell.slice(2)) },
        rowsPerSecond: rate,
      });
    const s = (await loadReportData(dir)).scenarios[0]!;
    const { sweep, cells } = sweepCells(s.rows);
    expect(sweep.knee).toBe("n=2");
    expect(sweep.singleRuns).toBe(true);
    expect(cells.map((c) => c.mark)).toEqual(["", "knee", "best"]);
    // one run a cell: a ratio, no interval
    expect(cells.map((c) => c.step)).toEqual([null, 2, 1.01]);
    expect(cells.every((c) => c.stepLow === null)).toBe(true);
    const m = svgMarks(await renderSvg(sweepSpec("k", "one", s.rows)!, "k"));
    expect(m.points).toBe(3 + 2);
    expect(m.lines).toEqual([3]);
    expect(answerLines(s)).toEqual([
      "n=4 is the best cell, at 202 rows/s: 2.02x the first cell, n=1 (one run a side: no interval)",
      "knee at n=2: rows/s stops rising after it (one run a cell: a rise under 5 % counts as none)",
      "no cell saturates (every run's saturation verdict: steady, oscillating or undetermined)",
    ]);
  });
});

describe("storage, MiB/s and the programs' own signals", () => {
  it("storage: a bar per stack of its bytes per million rows, compression where reported", async () => {
    expect(storageBars(scenario("replay"))).toEqual([
      {
        group: "fluentd",
        bytesPerMillionRows: 50e6,
        mibPerMillionRows: 50e6 / 2 ** 20,
        compression: 4.2,
        label: "47.7 MiB, 4.2x",
      },
      {
        group: "otelcol",
        bytesPerMillionRows: 30e6,
        mibPerMillionRows: 30e6 / 2 ** 20,
        compression: null,
        label: "28.6 MiB",
      },
    ]);
    expect(storageSpec(scenario("plain"))).toBeNull();
    expect(svgMarks(await renderSvg(storageSpec(scenario("replay"))!, "s")).bars).toBe(2);
  });

  it("MiB/s over time of a file replay: log and wire MiB/s per window; wire alone, said so, without log bytes", async () => {
    const runs = scenario("replay").runs;
    const fluentd = runs.find((r) => r.run.stack === "fluentd")!;
    const points = mibPoints(fluentd);
    const log = points.filter((p) => p.what === "log MiB/s");
    // the first window has no rate yet
    expect(log).toHaveLength(7);
    for (const p of log) {
      const w = fluentd.series.find((x) => x.elapsedS === p.elapsedS)!;
      expect(p.mib).toBeCloseTo((w.rowsPerSec! * 120) / 2 ** 20, 9);
    }
    expect(points.filter((p) => p.what === "wire MiB/s")).toHaveLength(7);
    expect(svgMarks(await renderSvg(mibSpec(fluentd)!, "m")).lines).toEqual([7, 7]);
    const otelcol = runs.find((r) => r.run.stack === "otelcol")!;
    expect(new Set(mibPoints(otelcol).map((p) => p.what))).toEqual(new Set(["wire MiB/s"]));
    expect(await renderSvg(mibSpec(otelcol)!, "o")).toContain("wire MiB/s over time");
    // not a file replay, no log bytes: no chart
    expect(mibSpec(scenario("plain").runs[0]!)).toBeNull();
  });

  it("the collector's flush and queue signals as Fluentd and otelcol name them; a line at 0 throughout is named, not drawn", async () => {
    const runs = scenario("replay").runs;
    const fluentd = runs.find((r) => r.run.stack === "fluentd")!;
    const points = collectorPoints(fluentd);
    expect([...new Set(points.map((p) => p.signal))]).toEqual([
      "buffer_queue_length",
      "slow_flush_count",
      "flush_time_count",
      "retry_count",
    ]);
    expect(points.filter((p) => p.signal === "slow_flush_count").map((p) => p.value)).toEqual([
      0, 0, 0, 0, 0, 1, 2, 3,
    ]);
    const svg = await renderSvg(collectorSignalsSpec(fluentd)!, "f");
    expect(svgMarks(svg).lines).toEqual([8, 8, 8]);
    expect(svg).toContain("at 0 throughout: collector ib_sink.retry_count");
    const otelcol = runs.find((r) => r.run.stack === "otelcol")!;
    expect(collectorPoints(otelcol).map((p) => [p.signal, p.value])).toEqual(
      [...Array(8).keys()].map((i) => ["otelcol_exporter_queue_size", 10 * i]),
    );
    expect(collectorSignalsSpec(scenario("plain").runs[0]!)).toBeNull();
  });

  it("the sink's merges from OpenSearch node stats", async () => {
    const fluentd = scenario("replay").runs[0]!;
    const points = sinkPoints(fluentd);
    expect(points.filter((p) => p.signal === "merges.current").map((p) => p.value)).toEqual([
      0, 1, 2, 0, 1, 2, 0, 1,
    ]);
    expect(points.filter((p) => p.signal === "merges.total")).toHaveLength(8);
    expect(svgMarks(await renderSvg(sinkSignalsSpec(fluentd)!, "n")).lines).toEqual([8, 8]);
    expect(sinkSignalsSpec(scenario("plain").runs[0]!)).toBeNull();
  });
});

describe("the answer first", () => {
  it("across stacks: the winner against the runner-up with its interval, and the cost line", () => {
    const lines = answerLines(scenario("replay"));
    const c = compareSamples([5050, 5100, 5150], [8050, 8100, 8150]);
    expect(lines).toEqual([
      `otelcol is fastest at 8,100 rows/s, 1.59x fluentd's 5,100 (${intervalText(c)})`,
      "cost per million rows (the whole stack, median of the runs): fluentd 60.0 core-s; otelcol $0.0120",
    ]);
    expect(intervalText(c)).toMatch(/^90 % interval \[1\.5\d, 1\.6\d\]; a real difference$/);
  });

  it("with one run a side it says so; a stack without a usable run is named", () => {
    expect(answerLines(scenario("plain"))).toEqual([
      "large is fastest at 90,000 rows/s, 3.00x medium's 30,000 (one run a side: no interval)",
      "no usable run (see the excluded runs): small",
    ]);
  });

  it("across stacks and cells: the winner per cell (2 runs a side: an interval, inconclusive)", () => {
    const lines = answerLines(scenario("sweep"));
    expect(lines[0]).toBe("fastest per cell: large in 3 of 3 cells");
    expect(lines[1]).toMatch(
      /^batch=1000: large is fastest at 80,150 rows\/s, 3\.98x small's 20,150 \(90 % interval \[\d\.\d\d, \d\.\d\d\]; inconclusive, n=2\/2\)$/,
    );
    expect(lines).toHaveLength(4);
  });

  it("one stack's sweep: the best cell against the first, the knee, the first cell that saturates", async () => {
    const one = (await loadReportData(root, { scenario: "sweep", stacks: ["small"] })).scenarios[0]!;
    const lines = answerLines(one);
    expect(lines[0]).toMatch(
      /^batch=50000 is the best cell, at 54,129 rows\/s: 2\.69x the first cell, batch=1000 \(90 % interval \[\d\.\d\d, \d\.\d\d\]; inconclusive, n=2\/2\)$/,
    );
    expect(lines.slice(1)).toEqual([
      "no knee: rows/s still rises at the last cell, batch=50000",
      "first cell that saturates: batch=50000, saturated (backpressure) in 2 of 2 runs",
    ]);
  });
});
