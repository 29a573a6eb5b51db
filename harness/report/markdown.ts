/**
 * The Markdown summary of a report, fit for a CI job summary ($GITHUB_STEP_SUMMARY): per scenario the answer in
 * words (./answer.ts), the comparison across stacks as a Markdown table, the verdicts, environment differences, the
 * runs left out with their reasons, and each run's status and bottleneck.
 */
import { VARIANT_SOURCES, variantsHeading, variantsTextTable } from "../results/across-variants.ts";
import { runFlags } from "../results/across-stacks.ts";
import { bottleneckLabel } from "../results/format.ts";
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

/** Escape what would break a Markdown table cell. */
const md = (s: string): string => s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\n/g, " ");

export function markdownTable(t: TextTable): string {
  const line = (cells: string[]): string => `| ${cells.map(md).join(" | ")} |`;
  return [
    line(t.head),
    `|${t.align.map((a) => (a === "r" ? "---:" : ":---")).join("|")}|`,
    ...t.rows.map(line),
  ].join("\n");
}

export function renderMarkdown(data: ReportData): string {
  const out: string[] = [
    "# ingestbench results",
    "",
    `Generated ${data.generatedAt} from \`${data.resultsRoot}\`. Median over each stack's latest runs; ratios to the first stack (to the first cell when one stack sweeps a parameter).`,
  ];
  for (const s of data.scenarios) {
    out.push(
      "",
      `## ${s.scenario}`,
      "",
      ...answerLines(s).map((x) => `- ${md(x)}`),
      "",
      md(scenarioMachineLine(s.rows)),
      "",
      markdownTable(comparisonTable(s.rows)),
    );
    const v = verdicts(s.rows);
    if (v.length) out.push("", "**Verdicts**", "", ...v.map((x) => `- ${md(x)}`));
    for (const t of s.variants ?? [])
      out.push(
        "",
        `**${md(variantsHeading(t))}**`,
        "",
        markdownTable(variantsTextTable(t)),
        "",
        md(VARIANT_SOURCES),
      );
    if (s.capacity)
      out.push(
        "",
        "**Capacity**",
        "",
        ...s.capacity.map(
          (f) =>
            `- ${md(`${f.stack}: sustainable ${sustainedText(f)}; bound by ${f.result.boundBy.join(", ") || "–"}; stopped: ${f.result.stopped}`)}`,
        ),
      );
    const d = differenceLines(s.differences);
    if (d.length) out.push("", "**Environment differences**", "", ...d.map((x) => `- ${md(x)}`));
    const x = excludedRunLines(s.excluded);
    if (x.length)
      out.push("", "**Excluded runs** (not used in any figure)", "", ...x.map((l) => `- ${md(l)}`));
    out.push(
      "",
      "<details><summary>runs</summary>",
      "",
      markdownTable({
        head: [
          "run",
          "stack",
          "cell",
          "replicate",
          "status",
          "rows/s",
          "bottleneck",
          "flags",
          "lost",
          "duplicated",
          "altered",
        ],
        align: ["l", "l", "l", "r", "l", "r", "l", "l", "r", "r", "r"],
        rows: s.runs.map(({ run }) => [
          run.runId,
          run.stack,
          run.cell,
          String(run.replicate),
          run.status + (run.error ? ` (${run.error.code})` : ""),
          run.summary ? Math.round(run.summary.rowsPerSecond).toLocaleString("en-US") : "–",
          run.summary ? bottleneckLabel(run.summary.bottleneck) : "–",
          [...runFlags([run]), ...(run.ledger?.inferred ? ["sent inferred"] : [])].join(", ") || "–",
          run.ledger ? String(run.ledger.lost) : "–",
          run.ledger ? String(run.ledger.duplicated) : "–",
          run.ledger?.altered !== undefined ? String(run.ledger.altered) : "–",
        ]),
      }),
      "",
      "</details>",
    );
    // fault steps: the timeline and what each fault cost, per run (harness/runner/fault-cost.ts)
    for (const { run } of s.runs) {
      const steps = [
        ...timelineLines(run.timeline ?? []),
        ...faultLines(run.faults ?? [], run.timeline ?? []),
      ];
      if (steps.length)
        out.push("", `**Fault steps of ${run.runId}**`, "", ...steps.map((x) => `- ${md(x)}`));
    }
  }
  return `${out.join("\n")}\n`;
}
