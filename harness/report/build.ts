/**
 * `ingestbench report`: gather results (data.ts), build each chart's Vega-Lite spec (charts/), render it to SVG at
 * build time (render.ts), and write one self-contained HTML file (html.ts) and optionally a Markdown summary
 * (markdown.ts).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TopLevelSpec } from "vega-lite";
import { ConfigurationError } from "../../core/errors.ts";
import { capacitySpec } from "./charts/capacity.ts";
import { capsSpec } from "./charts/caps.ts";
import { mibSpec } from "./charts/mib.ts";
import { collectorSignalsSpec, sinkSignalsSpec } from "./charts/signals.ts";
import { storageSpec } from "./charts/storage.ts";
import { sweepSpec, sweptStacks } from "./charts/sweep.ts";
import { deliverySpec } from "./charts/delivery.ts";
import { ledgerSpec } from "./charts/ledger.ts";
import { resourcesSpec } from "./charts/resources.ts";
import { throughputSpec } from "./charts/throughput.ts";
import { timelineSpec } from "./charts/timeline.ts";
import { loadReportData, type ReportData, type ReportSelection } from "./data.ts";
import { renderHtml, type ChartKind, type RenderedChart } from "./html.ts";
import { renderMarkdown } from "./markdown.ts";
import { renderSvg } from "./render.ts";

export interface Report {
  data: ReportData;
  charts: RenderedChart[];
  html: string;
  markdown: string;
}

/**
 * Render every chart of the report data: per scenario first each host's resources against its caps, then each swept
 * stack's curve, throughput, ledger, storage and capacity; per run its timeline, MiB/s (file replays), the
 * collector's and the sink's signals, delivery latency and sink resources (each when its data is there).
 */
export async function renderCharts(data: ReportData): Promise<RenderedChart[]> {
  const charts: RenderedChart[] = [];
  const add = async (
    kind: ChartKind,
    scenario: string,
    runId: string | null,
    spec: TopLevelSpec | null,
  ): Promise<void> => {
    if (spec === null) return;
    const id = `c${charts.length + 1}-${kind}`;
    charts.push({ kind, id, scenario, runId, svg: await renderSvg(spec, id) });
  };
  for (const s of data.scenarios) {
    await add("caps", s.scenario, null, capsSpec(s));
    for (const { stack, rows } of sweptStacks(s))
      await add("sweep", s.scenario, null, sweepSpec(s.scenario, stack, rows));
    await add("throughput", s.scenario, null, throughputSpec(s));
    await add("ledger", s.scenario, null, ledgerSpec(s));
    await add("storage", s.scenario, null, storageSpec(s));
    if (s.capacity) await add("capacity", s.scenario, null, capacitySpec(s.capacity));
    for (const r of s.runs) {
      await add("timeline", s.scenario, r.run.runId, timelineSpec(r));
      await add("mib", s.scenario, r.run.runId, mibSpec(r));
      await add("collector", s.scenario, r.run.runId, collectorSignalsSpec(r));
      await add("sink", s.scenario, r.run.runId, sinkSignalsSpec(r));
      await add("delivery", s.scenario, r.run.runId, deliverySpec(r));
      await add("resources", s.scenario, r.run.runId, resourcesSpec(r));
    }
  }
  return charts;
}

export async function buildReport(resultsRoot: string, selection: ReportSelection = {}): Promise<Report> {
  const data = await loadReportData(resultsRoot, selection);
  const charts = await renderCharts(data);
  return { data, charts, html: renderHtml(data, charts), markdown: renderMarkdown(data) };
}

export interface ReportFlags {
  results: string;
  scenario?: string;
  /** comma-separated */
  stacks?: string;
  out: string;
  markdown?: string;
}

async function writeOut(file: string, text: string): Promise<void> {
  try {
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await writeFile(file, text);
  } catch (err) {
    throw new ConfigurationError("E_REPORT_OUT", `cannot write ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The command: build and write the files; returns a one-line description of what was written. */
export async function reportCommand(flags: ReportFlags): Promise<string> {
  const stacks = flags.stacks
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const report = await buildReport(path.resolve(flags.results), { scenario: flags.scenario, stacks });
  await writeOut(flags.out, report.html);
  if (flags.markdown) await writeOut(flags.markdown, report.markdown);
  const runs = report.data.scenarios.reduce((n, s) => n + s.runs.length, 0);
  return (
    `report: ${flags.out} (${report.charts.length} charts, ${report.data.scenarios.length} scenario${report.data.scenarios.length === 1 ? "" : "s"}, ${runs} runs)` +
    (flags.markdown ? `; summary: ${flags.markdown}` : "")
  );
}
