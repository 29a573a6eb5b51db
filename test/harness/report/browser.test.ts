/**
 * The report in a real browser: Debian's chromium (apt-get install chromium), driven by playwright-core, never a
 * downloaded browser. The page loads from file:// with no console error, every chart has an <svg> with data marks,
 * each scenario's first chart is the resources-against-caps chart, drawn, and a full-page screenshot is kept in
 * .vitest-artifacts/ (git-ignored). Building the report (vega-lite compiling, vega rendering) warns of nothing.
 * Without /usr/bin/chromium this fails.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildReport, type Report } from "../../../harness/report/build.ts";
import { writePipelineResults, writeSyntheticResults } from "./fixtures.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = path.resolve(import.meta.dirname, "../../../.vitest-artifacts");

let root = "";
let report: Report;
let file = "";
let browser: Browser | null = null;
/** what vega-lite and vega said while the report was built (they warn and err on the console) */
const vegaSaid: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-browser-"));
  writeSyntheticResults(path.join(root, "results"));
  writePipelineResults(path.join(root, "results"));
  const said = (...args: unknown[]): void => void vegaSaid.push(args.map(String).join(" "));
  const spies = (["warn", "error", "log", "info"] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation(said),
  );
  try {
    report = await buildReport(path.join(root, "results"));
  } finally {
    for (const s of spies) s.mockRestore();
  }
  file = path.join(root, "report.html");
  writeFileSync(file, report.html);
});
afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("report in headless Chromium", () => {
  it("loads from file:// without console errors; every chart is an SVG with data marks; screenshot kept", async () => {
    expect(
      existsSync(CHROMIUM),
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`,
    ).toBe(true);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));

    const response = await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
    expect(response?.ok() ?? true).toBe(true);
    expect(await page.title()).toContain("ingestbench report");

    const charts = await page.$$eval("figure.chart", (figs) =>
      figs.map((f) => {
        const svg = f.querySelector("svg");
        const box = svg?.getBoundingClientRect();
        const q = (sel: string): number => svg?.querySelectorAll(sel).length ?? 0;
        return {
          kind: f.getAttribute("data-chart"),
          svgs: f.querySelectorAll("svg").length,
          width: box?.width ?? 0,
          height: box?.height ?? 0,
          bars: q('[aria-roledescription="bar"]'),
          points: q('[aria-roledescription="point"]'),
          ticks: q('[aria-roledescription="tick"]'),
          // drawn length of every line path, as the browser lays it out
          lineLengths: [...(svg?.querySelectorAll('path[aria-roledescription="line mark"]') ?? [])].map((p) =>
            (p as SVGPathElement).getTotalLength(),
          ),
        };
      }),
    );
    expect(charts).toHaveLength(report.charts.length);
    for (const c of charts) {
      expect(c.svgs, `${c.kind}`).toBe(1);
      expect(c.width).toBeGreaterThan(100);
      expect(c.height).toBeGreaterThan(100);
      const marks = c.bars + c.points + c.ticks + c.lineLengths.length;
      expect(marks, `${c.kind} has data marks`).toBeGreaterThan(0);
      for (const len of c.lineLengths) expect(len, `${c.kind} line drawn`).toBeGreaterThan(10);
    }
    const byKind = (k: string): typeof charts => charts.filter((c) => c.kind === k);
    // plain and replay: a bar for each stack with a usable run (small's only run failed and is excluded); sweep: 12 points
    expect(
      byKind("throughput")
        .map((c) => c.bars + c.points)
        .sort((a, b) => a - b),
    ).toEqual([2, 2, 12]);
    expect(
      byKind("ledger")
        .map((c) => c.bars)
        .sort((a, b) => a - b),
    ).toEqual([8, 12, 24]);
    expect(byKind("timeline")).toHaveLength(15 + 6);
    // every kind of chart is drawn by the browser: the replay's storage, MiB/s, collector and sink signals too
    expect(new Set(charts.map((c) => c.kind))).toEqual(
      new Set([
        "caps",
        "sweep",
        "throughput",
        "ledger",
        "storage",
        "timeline",
        "mib",
        "collector",
        "sink",
        "resources",
      ]),
    );

    // each scenario's first chart is the resources-against-caps chart: bars of shares, rules of thresholds, a
    // facet per stack (and cell), the bottleneck in red
    const firsts = await page.$$eval("section.scenario", (sections) =>
      sections.map((s) => {
        const f = s.querySelector("figure.chart");
        const svg = f?.querySelector("svg");
        const answer = s.querySelector("ul.answer");
        return {
          scenario: s.getAttribute("data-scenario"),
          kind: f?.getAttribute("data-chart"),
          answerFirst:
            answer !== null &&
            f !== null &&
            !!(answer.compareDocumentPosition(f!) & Node.DOCUMENT_POSITION_FOLLOWING),
          answer: answer?.textContent ?? "",
          bars: svg?.querySelectorAll('[aria-roledescription="bar"]').length ?? 0,
          red: [...(svg?.querySelectorAll('path[aria-roledescription="bar"]') ?? [])].filter(
            (b) => b.getAttribute("fill") === "#d62728",
          ).length,
          ticks: svg?.querySelectorAll('[aria-roledescription="tick"]').length ?? 0,
          noCap: [...(svg?.querySelectorAll("text") ?? [])].filter((t) => t.textContent === "no cap").length,
          height: svg?.getBoundingClientRect().height ?? 0,
        };
      }),
    );
    expect(firsts.map((f) => f.scenario)).toEqual(["plain", "replay", "sweep"]);
    for (const f of firsts) {
      expect(f.kind, f.scenario!).toBe("caps");
      expect(f.answerFirst, f.scenario!).toBe(true);
      expect(f.bars, f.scenario!).toBeGreaterThan(0);
      expect(f.ticks, f.scenario!).toBeGreaterThan(0);
      expect(f.noCap, f.scenario!).toBeGreaterThan(0);
      expect(f.height, f.scenario!).toBeGreaterThan(200);
    }
    // replay: the collector's throttling bound every run of both stacks, one red bar per stack
    expect(firsts.find((f) => f.scenario === "replay")!.red).toBe(2);
    expect(firsts.find((f) => f.scenario === "replay")!.answer).toContain("otelcol is fastest");
    expect(byKind("resources").every((c) => c.lineLengths.length === 4)).toBe(true);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = path.join(ARTIFACTS, "report.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);

    expect(problems).toEqual([]);
    expect(vegaSaid).toEqual([]);
    expect(requests.every((u) => u.startsWith("file://") || u.startsWith("data:"))).toBe(true);
  });
});
