/**
 * The HTML report: one self-contained file (inline CSS and SVG, no script, no external resource), per scenario the
 * answer in words (./answer.ts) and the chart of each host's resources against its caps first, then the comparison
 * table, the scenario's other charts, then per run its charts (./build.ts renderCharts says which).
 * Every chart is a <figure class="chart" data-chart="<kind>"> holding one <svg>.
 */
import { VARIANT_SOURCES, variantsHeading, variantsTextTable } from "../results/across-variants.ts";
import { runFlags } from "../results/across-stacks.ts";
import { bottleneckLabel, mibText } from "../results/format.ts";
import { sustainedText } from "../../ui/capacity.ts";
import { answerLines } from "./answer.ts";
import type { ReportData } from "./data.ts";
import { faultLines, timelineLines } from "../runner/fault-cost.ts";
import {
  comparisonTable,
  differenceLines,
  excludedRunLines,
  scenarioMachineLine,
  verdicts,
  type TextTable,
} from "./table.ts";

export type ChartKind =
  | "caps"
  | "sweep"
  | "throughput"
  | "ledger"
  | "storage"
  | "capacity"
  | "timeline"
  | "mib"
  | "collector"
  | "sink"
  | "delivery"
  | "resources";

export interface RenderedChart {
  kind: ChartKind;
  /** unique in the page */
  id: string;
  scenario: string;
  /** run id for per-run charts */
  runId: string | null;
  svg: string;
}

export const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A table; a header cell whose column has a unit (TextTable.units) carries it as its title (a tooltip). */
function htmlTable(t: TextTable): string {
  const cell = (tag: "th" | "td", text: string, i: number, attrs = ""): string =>
    `<${tag} class="${t.align[i] === "r" ? "r" : "l"}"${attrs}>${esc(text)}</${tag}>`;
  const th = (text: string, i: number): string => {
    const unit = t.units?.[i];
    return cell("th", text, i, unit ? ` title="${esc(unit)}"` : "");
  };
  return (
    `<table><thead><tr>${t.head.map(th).join("")}</tr></thead><tbody>` +
    t.rows.map((r) => `<tr>${r.map((c, i) => cell("td", c, i)).join("")}</tr>`).join("") +
    "</tbody></table>"
  );
}

const figure = (c: RenderedChart): string =>
  `<figure class="chart" id="${esc(c.id)}" data-chart="${c.kind}"${c.runId ? ` data-run="${esc(c.runId)}"` : ""}>${c.svg}</figure>`;

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1400px;padding:0 16px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}.meta{color:#666;font-size:12px}
table{border-collapse:collapse;font-size:12px;margin:8px 0;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:3px 7px;white-space:nowrap}th{background:#f5f5f5}td.r,th.r{text-align:right}td.l,th.l{text-align:left}
ul{margin:4px 0 8px;padding-left:20px;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}figure.chart{margin:0;padding:8px;border:1px solid #eee;border-radius:4px;background:#fff}
figure.chart svg{display:block;max-width:100%;height:auto}.status-ok{color:#2a7a2a}ul.answer{font-size:15px;background:#f6f8fb;border-left:3px solid #4c78a8;padding:6px 10px 6px 26px}.status-bad{color:#b00020;font-weight:bold}
`;

export function renderHtml(data: ReportData, charts: RenderedChart[]): string {
  const body: string[] = [
    `<h1>ingestbench report</h1>`,
    `<p class="meta">generated ${esc(data.generatedAt)} from ${esc(data.resultsRoot)}; scenarios: ${esc(data.scenarios.map((s) => s.scenario).join(", "))}. ` +
      `Throughput is what the sink confirmed over real elapsed time; medians over each stack's latest runs, ratios to the first stack (to the first cell when one stack sweeps a parameter).</p>`,
  ];
  for (const s of data.scenarios) {
    const mine = charts.filter((c) => c.scenario === s.scenario);
    // the answer first, then the chart that says why (each host's resources against its caps)
    const caps = mine.filter((c) => c.kind === "caps");
    body.push(
      `<section class="scenario" data-scenario="${esc(s.scenario)}"><h2>${esc(s.scenario)}</h2>`,
      `<ul class="answer">${answerLines(s)
        .map((x) => `<li>${esc(x)}</li>`)
        .join("")}</ul>`,
      ...(caps.length ? [`<div class="charts">${caps.map(figure).join("")}</div>`] : []),
      `<p class="meta machine">${esc(scenarioMachineLine(s.rows))}</p>`,
      htmlTable(comparisonTable(s.rows)),
    );
    const v = verdicts(s.rows);
    if (v.length) body.push(`<ul>${v.map((x) => `<li>${esc(x)}</li>`).join("")}</ul>`);
    for (const t of s.variants ?? [])
      body.push(
        `<h3>${esc(variantsHeading(t))}</h3>`,
        htmlTable(variantsTextTable(t)),
        `<p class="meta">${esc(VARIANT_SOURCES)}</p>`,
      );
    if (s.capacity)
      body.push(
        `<h3>capacity</h3><ul class="capacity">${s.capacity.map((f) => `<li>${esc(`${f.stack}: sustainable ${sustainedText(f)}; bound by ${f.result.boundBy.join(", ") || "–"}; stopped: ${f.result.stopped}`)}</li>`).join("")}</ul>`,
      );
    const d = differenceLines(s.differences);
    if (d.length)
      body.push(`<h3>environment differences</h3><ul>${d.map((x) => `<li>${esc(x)}</li>`).join("")}</ul>`);
    const x = excludedRunLines(s.excluded);
    if (x.length)
      body.push(
        `<h3>excluded runs</h3><p class="meta">not used in any figure above</p><ul class="excluded">${x.map((l) => `<li>${esc(l)}</li>`).join("")}</ul>`,
      );
    body.push(
      `<div class="charts">${mine
        .filter((c) => c.runId === null && c.kind !== "caps")
        .map(figure)
        .join("")}</div>`,
    );
    for (const r of s.runs) {
      const runCharts = mine.filter((c) => c.runId === r.run.runId);
      const status =
        r.run.status === "ok"
          ? `<span class="status-ok">ok</span>`
          : `<span class="status-bad">${esc(r.run.status)}</span>`;
      const sum = r.run.summary;
      body.push(`<h3>${esc(r.label)} — ${esc(r.run.runId)} ${status}</h3>`);
      if (sum) {
        body.push(
          `<p class="meta">${Math.round(sum.rowsPerSecond).toLocaleString("en-US")} rows/s, ${esc(mibText(sum))} over ${sum.measuredSeconds.toFixed(1)} s; ` +
            `bottleneck ${sum.bottleneck.resource === "uncertain" ? "" : `${esc(bottleneckLabel(sum.bottleneck))}: `}${esc(sum.bottleneck.evidence)}</p>`,
        );
      }
      const flags = runFlags([r.run]);
      if (flags.length)
        body.push(
          `<p class="meta status-bad">${esc(flags.join(", "))}${r.run.caps?.oversubscribed ? `: ${esc(r.run.caps.reasons.join("; "))}` : ""}${sum?.contention?.contended ? `; ${esc(sum.contention.reasons.join("; "))}` : ""}</p>`,
        );
      if (r.run.error)
        body.push(
          `<p class="meta status-bad">error ${esc(r.run.error.code)}: ${esc(r.run.error.message)}</p>`,
        );
      const steps = [
        ...timelineLines(r.run.timeline ?? []),
        ...faultLines(r.run.faults ?? [], r.run.timeline ?? []),
      ];
      if (steps.length)
        body.push(`<ul class="faults">${steps.map((x) => `<li>${esc(x)}</li>`).join("")}</ul>`);
      body.push(
        runCharts.length
          ? `<div class="charts">${runCharts.map(figure).join("")}</div>`
          : `<p class="meta">no series recorded</p>`,
      );
    }
    body.push("</section>");
  }
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<link rel="icon" href="data:,"><title>ingestbench report: ${esc(data.scenarios.map((s) => s.scenario).join(", "))}</title><style>${CSS}</style></head>\n` +
    `<body>\n${body.join("\n")}\n</body></html>\n`
  );
}
