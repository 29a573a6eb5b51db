import { spawnSync } from "node:child_process";
import { appendFileSync, writeFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { buildReport, reportCommand, type Report } from "../../../harness/report/build.ts";
import { phaseSpans } from "../../../harness/report/charts/timeline.ts";
import { readSeries } from "../../../harness/report/data.ts";
import type { RenderedChart } from "../../../harness/report/html.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { svgMarks, writeSyntheticResults, writeSyntheticRun } from "./fixtures.ts";

let root = "";
let report: Report;
let sweepRuns: RunRecord[] = [];
let plainRuns: RunRecord[] = [];

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-report-"));
  ({ sweepRuns, plainRuns } = writeSyntheticResults(path.join(root, "results")));
  report = await buildReport(path.join(root, "results"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const chartsOf = (scenario: string, kind: RenderedChart["kind"]): RenderedChart[] =>
  report.charts.filter((c) => c.scenario === scenario && c.kind === kind);

describe("report data", () => {
  it("covers each scenario's latest runs, stacks in the order their runs started", () => {
    expect(report.data.scenarios.map((s) => s.scenario)).toEqual(["plain", "sweep"]);
    const plain = report.data.scenarios[0]!;
    expect(plain.stacks).toEqual(["small", "medium", "large"]);
    expect(plain.runs.map((r) => r.run.runId).sort()).toEqual(plainRuns.map((r) => r.runId).sort());
    expect(plain.sweep).toBeNull();
    const sweep = report.data.scenarios[1]!;
    expect(sweep.stacks).toEqual(["small", "large"]);
    expect(sweep.runs).toHaveLength(12);
    expect(sweep.sweep).toEqual({ keys: ["generator.pg-copy.batch"] });
    expect(sweep.rows.map((r) => r.ratio).every((x) => x > 1 || x === 1)).toBe(true);
  });

  it("splits a series into contiguous phase spans", () => {
    const spans = phaseSpans(report.data.scenarios[0]!.runs[0]!.series);
    expect(spans.map((s) => s.phase)).toEqual(["warmup", "measure", "drain"]);
    expect(spans[0]).toMatchObject({ from: 0, to: 2 });
    expect(spans[1]).toMatchObject({ from: 2, to: 6 });
    expect(spans[2]).toMatchObject({ from: 6, to: 8 });
  });
});

describe("charts", () => {
  it("renders one chart of each kind per scenario and per run, each an SVG", () => {
    expect(chartsOf("plain", "caps")).toHaveLength(1);
    expect(chartsOf("sweep", "caps")).toHaveLength(1);
    // a sweep's curve per stack that measured several cells
    expect(chartsOf("sweep", "sweep")).toHaveLength(2);
    expect(chartsOf("plain", "sweep")).toHaveLength(0);
    // no storage, file replay, collector or sink signals in these fixtures (./charts.test.ts has them)
    for (const k of ["storage", "mib", "collector", "sink"] as const)
      expect(chartsOf("plain", k)).toEqual([]);
    expect(chartsOf("plain", "throughput")).toHaveLength(1);
    expect(chartsOf("plain", "ledger")).toHaveLength(1);
    expect(chartsOf("plain", "timeline")).toHaveLength(3);
    expect(chartsOf("plain", "resources")).toHaveLength(3);
    expect(chartsOf("sweep", "timeline")).toHaveLength(12);
    expect(report.charts).toHaveLength(2 + 2 + 6 + 2 + 2 + 24);
    // the first chart of each scenario is the resources-against-caps chart
    for (const sc of ["plain", "sweep"])
      expect(report.charts.find((c) => c.scenario === sc)!.kind).toBe("caps");
    for (const c of report.charts) expect(c.svg).toMatch(/^<svg[^>]*class="marks"/);
  });

  it("without a matrix: one bar per stack (median rows/s, labelled) and one tick per run, the failed run of small left out", () => {
    const m = svgMarks(chartsOf("plain", "throughput")[0]!.svg);
    expect(m.bars).toBe(2);
    expect(m.ticks).toBe(2);
    expect(chartsOf("plain", "throughput")[0]!.svg).toContain("90,000");
  });

  it("with a matrix: one line of medians per stack over the swept values, one point per run", () => {
    const m = svgMarks(chartsOf("sweep", "throughput")[0]!.svg);
    expect(m.points).toBe(12);
    expect(m.lines).toEqual([3, 3]);
    expect(chartsOf("sweep", "throughput")[0]!.svg).toContain("generator.pg-copy.batch");
  });

  it("ledger: sent, stored, lost and duplicated bars per stack (and cell), counts written on them", () => {
    const plain = svgMarks(chartsOf("plain", "ledger")[0]!.svg);
    expect(plain.bars).toBe(3 * 4);
    expect(plain.texts).toBe(3 * 4);
    const svg = chartsOf("plain", "ledger")[0]!.svg;
    expect(svg).toMatch(/aria-label="[^"]*measure: lost; rows: 5"/);
    expect(svg).toMatch(/aria-label="[^"]*measure: duplicated; rows: 2"/);
    expect(svgMarks(chartsOf("sweep", "ledger")[0]!.svg).bars).toBe(6 * 4);
  });

  it("timeline: throughput (first window has no rate) and lag lines through every window", () => {
    for (const c of chartsOf("plain", "timeline")) {
      const m = svgMarks(c.svg);
      expect(m.lines).toEqual([7, 8]);
      expect(m.points).toBe(7 + 8);
      expect(c.svg).toContain("ingest lag, ms");
    }
    for (const c of chartsOf("sweep", "timeline")) expect(svgMarks(c.svg).lines).toEqual([11, 12]);
  });

  it("resources: sink CPU cores, throttled share and two IO lines through every window", () => {
    for (const c of chartsOf("plain", "resources")) {
      const m = svgMarks(c.svg);
      // throttled share is drawn as steps: 2n − 1 vertices for n windows
      expect(m.lines).toEqual([8, 2 * 8 - 1, 8, 8]);
      expect(c.svg).toContain("throttled share");
    }
    // the cap is drawn as a rule where it is one: the "large" stack's 2 cores on the fixtures' 2-core machine are
    // no cap ("uncapped (≥ machine)", harness/results/caps.ts sinkCaps), so its chart has no rule
    const rules = chartsOf("plain", "resources").map((c) => c.svg.includes("rule mark"));
    expect(rules.filter(Boolean)).toHaveLength(2);
    expect(
      chartsOf("plain", "resources").filter((c) => c.svg.includes("CPU, cores (rule: cap)")),
    ).toHaveLength(2);
  });

  it("each scenario's section opens with the answer, then the resources-against-caps chart, before the table", () => {
    for (const sc of ["plain", "sweep"]) {
      const at = report.html.indexOf(`data-scenario="${sc}"`);
      const section = report.html.slice(at, report.html.indexOf("</section>", at));
      const answer = section.indexOf('<ul class="answer">');
      const firstFigure = section.indexOf('<figure class="chart"');
      expect(answer).toBeGreaterThan(0);
      expect(section.slice(firstFigure)).toMatch(/^<figure class="chart" id="[^"]+" data-chart="caps">/);
      expect(answer).toBeLessThan(firstFigure);
      expect(firstFigure).toBeLessThan(section.indexOf("<table>"));
    }
    expect(report.html).toContain(
      "<li>large is fastest at 90,000 rows/s, 3.00x medium's 30,000 (one run a side: no interval)</li>",
    );
  });

  it("prefixes SVG element ids so that inlined charts do not share them", () => {
    const ids = [...report.html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("HTML and Markdown", () => {
  it("is one self-contained page: every chart inline, no script, no external resource", () => {
    expect(report.html.startsWith("<!doctype html>")).toBe(true);
    expect(report.html).not.toMatch(/<script/i);
    expect(report.html).not.toMatch(/(src|href)="(https?:)?\/\//i);
    expect(report.html.match(/<figure class="chart"/g)).toHaveLength(report.charts.length);
    expect(report.html).toContain("exact (");
    expect(report.html).toContain("lost 5, dup 2");
    expect(report.html).toMatch(
      /<h3>excluded runs<\/h3>.*<li>\S+ \(small, default\): failed: ledger\.lost \(actual 5, expected = 0\)<\/li>/s,
    );
  });

  it("shows CPU ms/1k rows in the HTML comparison table, each stack's median (3 ms in every synthetic run), unit as the header's title", () => {
    const section = report.html.slice(report.html.indexOf('data-scenario="plain"'));
    const table = section.slice(0, section.indexOf("</table>"));
    const heads = [...table.matchAll(/<th [^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
    const col = heads.indexOf("CPU ms/1k rows");
    expect(col).toBeGreaterThan(heads.indexOf("sink cores"));
    expect(table).toContain('<th class="r" title="sink CPU milliseconds per 1000 rows">CPU ms/1k rows</th>');
    const rows = [...table.matchAll(/<tr>((?:<td[^>]*>[^<]*<\/td>)+)<\/tr>/g)].map((m) =>
      [...m[1]!.matchAll(/<td [^>]*>([^<]*)<\/td>/g)].map((c) => c[1]),
    );
    expect(rows.map((r) => r[0])).toEqual(["small", "medium", "large"]);
    for (const r of rows) {
      expect(r).toHaveLength(heads.length);
      // small's only run failed (5 lost): excluded, so no figure
      expect(r[col]).toBe(r[0] === "small" ? "–" : "3.0");
    }
    expect(report.markdown).toMatch(
      /^\| stack \| runs \|.*\| sink cores \| CPU ms\/1k rows \| disk MiB\/M rows \| throttled \|/m,
    );
  });

  it("summarises each scenario as a Markdown table", () => {
    const md = report.markdown;
    expect(md).toContain("## plain");
    expect(md).toContain("## sweep");
    // every number names its machine: each scenario's section says where its figures were measured
    // the answer first, then the machine
    expect(md).toMatch(
      /^## plain\n\n- large is fastest at 90,000 rows\/s, 3\.00x medium's 30,000 \(one run a side: no interval\)\n- no usable run \(see the excluded runs\): small\n\nmeasured on \S.*, \d+ cores, kernel \S+, cgroup v\d$/m,
    );
    expect(report.html).toMatch(/<p class="meta machine">measured on [^<]+, \d+ cores, kernel [^<]+<\/p>/);
    expect(md).toMatch(/^\| stack \| runs \| rows\/s \|/m);
    expect(md).toMatch(/^\| stack \| cell \| runs \|/m);
    // small's run failed (5 lost): listed, its ledger shown, but no figure rests on it (and no ratio to it)
    expect(md).toMatch(/^\| small \| 0\/1 \(failed\) \| – \|.*\| lost 5, dup 2 \|$/m);
    expect(md).toMatch(/^\| large \| 1\/1 \| 90,000 \|.*\| – \|/m);
    expect(md).toContain("**Excluded runs** (not used in any figure)");
    expect(md).toMatch(/^- \S+ \(small, default\): failed: ledger\.lost \(actual 5, expected = 0\)$/m);
    // separator row has one cell per column
    const lines = md.split("\n");
    const head = lines.findIndex((l) => l.startsWith("| stack | runs"));
    expect(lines[head + 1]!.split("|").length).toBe(lines[head]!.split("|").length);
  });

  it("the command writes the files and filters scenario and stacks", async () => {
    const out = path.join(root, "out", "r.html");
    const md = path.join(root, "out", "s.md");
    const msg = await reportCommand({
      results: path.join(root, "results"),
      scenario: "plain",
      stacks: "large,small",
      out,
      markdown: md,
    });
    expect(msg).toContain("7 charts");
    expect(existsSync(out)).toBe(true);
    const text = readFileSync(md, "utf8");
    expect(text).not.toContain("## sweep");
    expect(text).not.toContain("| medium |");
    expect(text).toMatch(/^\| small \| 0\/1 \(failed\) \| – \|.*\| – \|/m);
    expect(text).toMatch(/^\| large \| 1\/1 \| 90,000 \|.*\| 1\.00x \|/m);
  });

  it("refuses a selection with no results", async () => {
    await expect(buildReport(path.join(root, "results"), { scenario: "nope" })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
  });
});

describe("ingestbench report (command line)", () => {
  it("writes the HTML and the Markdown summary and says what it wrote", () => {
    const out = path.join(root, "cli", "report.html");
    const md = path.join(root, "cli", "summary.md");
    const r = spawnSync(
      process.execPath,
      [
        "bin/ingestbench.js",
        "report",
        "--results",
        path.join(root, "results"),
        "--scenario",
        "sweep",
        "--out",
        out,
        "--markdown",
        md,
      ],
      {
        cwd: path.resolve(import.meta.dirname, "../../.."),
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("29 charts, 1 scenario, 12 runs");
    expect(readFileSync(out, "utf8")).toContain('data-scenario="sweep"');
    expect(readFileSync(md, "utf8")).toContain("## sweep");
  });

  it("exits 2 when nothing matches", () => {
    const r = spawnSync(
      process.execPath,
      [
        "bin/ingestbench.js",
        "report",
        "--results",
        path.join(root, "results"),
        "--stacks",
        "nope",
        "--out",
        path.join(root, "x.html"),
      ],
      {
        cwd: path.resolve(import.meta.dirname, "../../.."),
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/no results/);
  });
});

describe("series of interrupted runs", () => {
  it("keeps every whole line of a series whose last line was cut", async () => {
    const dir = path.join(root, "cut");
    const run = writeSyntheticRun(dir, {
      stack: "s",
      scenario: "q",
      invocation: "2026-11-29T10:00:00.000Z",
      rowsPerSecond: 5,
      points: 6,
    });
    appendFileSync(
      path.join(dir, "s", "q", run.runId, "series.jsonl"),
      '{"t":1795987104792.961,"elapsedS":7.0',
    );
    expect(await readSeries(path.join(dir, "s", "q", run.runId))).toHaveLength(6);
    expect(await readSeries(path.join(dir, "none"))).toEqual([]);
    const rep = await buildReport(dir);
    expect(rep.charts.map((c) => c.kind)).toEqual(["caps", "throughput", "ledger", "timeline", "resources"]);
  });
});

describe("delivery-latency chart per run", () => {
  it("draws p50 and p99 per window over time for a run whose sink stamps stored_at, and none for a run without", async () => {
    const dir = path.join(root, "delivery");
    const run = writeSyntheticRun(dir, {
      stack: "s",
      scenario: "d",
      invocation: "2026-11-29T10:00:00.000Z",
      rowsPerSecond: 5,
      points: 8,
    });
    writeSyntheticRun(dir, {
      stack: "s",
      scenario: "d",
      invocation: "2026-11-29T10:00:00.000Z",
      rowsPerSecond: 5,
      points: 8,
    });
    const file = path.join(dir, "s", "d", run.runId, "series.jsonl");
    const points = (await readSeries(path.join(dir, "s", "d", run.runId))).map((p, i) => ({
      ...p,
      delivery: i === 3 ? null : { rows: 5, p50Ms: 40 + i, p99Ms: 400 + 10 * i, maxMs: 900 },
    }));
    writeFileSync(file, points.map((p) => `${JSON.stringify(p)}\n`).join(""));
    const rep = await buildReport(dir);
    const delivery = rep.charts.filter((c) => c.kind === "delivery");
    expect(delivery.map((c) => c.runId)).toEqual([run.runId]);
    expect(delivery[0]!.svg).toContain("delivery latency at the sink");
    expect(delivery[0]!.svg).toContain("stored_at − sent_at, ms");
    // one line per percentile, a vertex per window that had rows (7 of 8)
    expect(svgMarks(delivery[0]!.svg).lines).toEqual([7, 7]);
    expect(rep.html).toContain('data-chart="delivery"');
  });
});
