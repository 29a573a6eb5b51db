/**
 * The nightly decision's printed words (harness/nightly/run.ts decides): the summary table with the verdict for the
 * terminal, and the Markdown summary for a CI job.
 */
import Table from "cli-table3";
import { excludedLines } from "../harness/results/eligibility.ts";
import { cellName, type NightlyCell, type NightlyDecision } from "../harness/nightly/run.ts";
import { fix, int, pct } from "./format.ts";

const ratioText = (c: NightlyCell): string => fix(c.ratio, 2, "x");
const ciText = (c: NightlyCell): string => (c.ci ? `[${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}]` : "–");
const floorText = (c: NightlyCell): string =>
  c.noiseFloor === null
    ? "–"
    : `±${pct(c.noiseFloor, 1)}${c.noiseFloorSource === "nights" ? " (nights)" : " (A/A)"}`;
const pText = (c: NightlyCell): string => {
  const dir = c.candidate ?? "slower";
  return Number.isNaN(c.pAdjusted[dir]) ? "–" : c.pAdjusted[dir].toPrecision(2);
};
const baselineText = (c: NightlyCell): string =>
  c.n.nights === 0
    ? "–"
    : `${int(c.baselineRowsPerSecond)} (${c.n.nights} night${c.n.nights === 1 ? "" : "s"})`;
const verdict = (c: NightlyCell): string =>
  c.significant && c.change === "slower"
    ? "REGRESSION"
    : c.significant
      ? (c.change ?? "–")
      : c.environmentChanged
        ? "environment changed, no verdict"
        : c.method === null
          ? "not compared"
          : c.inconclusive
            ? `inconclusive (n=${c.n.previous}/${c.n.latest})`
            : "no change";
const driftText = (c: NightlyCell): string => {
  const d = c.drift;
  if (!d) return "–";
  const per = `${d.perDay >= 0 ? "+" : ""}${pct(d.perDay, 2)}/day`;
  return d.detected ? `${d.direction} ${per}` : `none (${per})`;
};
/** MiB per million rows tonight, with its ratio to the baseline nights (harness/nightly/storage.ts). */
const storageText = (c: NightlyCell): string => {
  const s = c.storage;
  if (!s) return "–";
  const mib = fix(s.latestBytesPerMillionRows / 2 ** 20, 1);
  return s.ratio === null ? mib : `${mib} (${fix(s.ratio, 2, "x")})`;
};
/** The note of a cell whose storage changed. */
const storageNote = (c: NightlyCell): string => {
  const s = c.storage!;
  const values = s.baselineNights.map((b) => b.bytesPerMillionRows / 2 ** 20);
  return `${cellName(c)}: storage ${s.change}: ${fix(s.latestBytesPerMillionRows / 2 ** 20, 2)} MiB per million rows, ${fix(s.ratio, 2, "x")} the baseline nights' ${fix(s.baselineBytesPerMillionRows! / 2 ** 20, 2)} (range ${fix(Math.min(...values), 2)}–${fix(Math.max(...values), 2)}; reported, not failing)`;
};
const storageChanged = (c: NightlyCell): boolean =>
  c.storage?.change === "larger" || c.storage?.change === "smaller";
const inconclusiveNote = (d: NightlyDecision): string =>
  d.inconclusive.length
    ? `; ${d.inconclusive.length} cell(s) inconclusive: fewer than 3 measured runs in a night (give replicates: 3 or more)`
    : "";
const than = (cells: NightlyCell[]): string =>
  cells.every((c) => c.n.nights === 1) ? "the previous night" : "their baseline of previous good nights";

/** The summary table and the verdict, as printed. */
export function renderNightly(d: NightlyDecision): string {
  const table = new Table({
    head: [
      "stack",
      "scenario",
      "cell",
      "baseline rows/s",
      "latest rows/s",
      "ratio",
      "90 % interval",
      "floor",
      "p (Holm)",
      "drift",
      "disk MiB/M rows",
      "verdict",
    ],
    style: { head: [], border: [] },
  });
  const notes: string[] = [];
  for (const p of d.pairs) {
    if (p.status !== "compared") {
      const word = {
        "no-previous": "no previous night",
        "no-history": "MISSING HISTORY",
        "environment-changed": "environment changed, no verdict",
        error: "refused",
        compared: "",
      }[p.status];
      if (p.cells.length === 0)
        table.push([p.stack, p.scenario, "–", "–", "–", "–", "–", "–", "–", "–", "–", word]);
      notes.push(`${p.stack}/${p.scenario}: ${p.code ? `${p.code}: ` : ""}${p.message}`);
    }
    if (p.differences.length)
      notes.push(
        `${p.stack}/${p.scenario}: differences between the nights:\n${p.differences.map((x) => `  ${x}`).join("\n")}`,
      );
    for (const c of p.cells) {
      table.push([
        c.stack,
        c.scenario,
        c.cell,
        baselineText(c),
        int(c.latestRowsPerSecond),
        ratioText(c),
        ciText(c),
        floorText(c),
        pText(c),
        driftText(c),
        storageText(c),
        verdict(c),
      ]);
      const skipped = c.skippedNights.filter((s) => !s.reason.startsWith("other environment"));
      if (skipped.length)
        notes.push(
          `${cellName(c)}: left out of the baseline: ${skipped.map((s) => `${s.invocation} (${s.reason})`).join(", ")}`,
        );
      if (storageChanged(c)) notes.push(storageNote(c));
      if (c.drift?.detected)
        notes.push(
          `${cellName(c)}: drifting ${c.drift.direction}: Theil–Sen ${pct(c.drift.perDay, 2)}/day, ${pct(c.drift.overWindow, 1)} over ${c.drift.days.toFixed(0)} days (Mann–Kendall p = ${c.drift.p.toPrecision(2)}, Holm ${c.drift.pAdjusted.toPrecision(2)})`,
        );
    }
    if (p.excluded.length)
      notes.push(
        `${p.stack}/${p.scenario}: excluded runs (not used):\n${excludedLines(p.excluded)
          .map((x) => `  ${x}`)
          .join("\n")}`,
      );
  }
  const missing = d.pairs.filter((p) => p.status === "no-history");
  const tail =
    d.regressions.length > 0
      ? `REGRESSION: ${d.regressions.length} cell(s) significantly slower than ${than(d.regressions)}: ${d.regressions.map((c) => `${cellName(c)} (${ratioText(c)})`).join(", ")}`
      : missing.length > 0
        ? `MISSING HISTORY: ${missing.map((p) => `${p.stack}/${p.scenario}`).join(", ")} had no earlier night although history was required (E_NIGHTLY_HISTORY)`
        : d.pairs.every((p) => p.status === "no-previous")
          ? "no previous night: nothing to compare with yet (this night is the baseline for the next)"
          : d.exitCode === 2
            ? `a pair could not be decided (see above); no regression among the cells compared${inconclusiveNote(d)}`
            : `no regression${inconclusiveNote(d)}`;
  return `${table.toString()}${notes.length ? `\n${notes.join("\n")}` : ""}\n${tail}`;
}

/** A Markdown summary (for a CI job summary). */
export function nightlyMarkdown(d: NightlyDecision): string {
  const lines = [
    "## ingestbench nightly",
    "",
    `Baseline: the previous ${d.window} good nights in the same environment; Holm-adjusted one-sided tests at α = ${d.alpha}.`,
    "",
    "| stack | scenario | cell | baseline rows/s | latest rows/s | ratio | 90 % interval | floor | p (Holm) | drift | disk MiB/M rows | verdict |",
    "|---|---|---|---:|---:|---:|---|---:|---:|---|---:|---|",
  ];
  const notes: string[] = [];
  for (const p of d.pairs) {
    if (p.status !== "compared")
      lines.push(
        `| ${p.stack} | ${p.scenario} | – | – | – | – | – | – | – | – | – | ${p.message ?? p.status} |`,
      );
    for (const c of p.cells)
      lines.push(
        `| ${c.stack} | ${c.scenario} | ${c.cell} | ${baselineText(c)} | ${int(c.latestRowsPerSecond)} | ${ratioText(c)} | ${ciText(c)} | ${floorText(c)} | ${pText(c)} | ${driftText(c)} | ${storageText(c)} | ${verdict(c)} |`,
      );
    for (const x of excludedLines(p.excluded))
      notes.push(`- ${p.stack}/${p.scenario}: ${x.replace(/\|/g, "\\|")}`);
  }
  lines.push(
    "",
    d.regressions.length > 0
      ? `**Regression** in ${d.regressions.map((c) => `\`${cellName(c)}\``).join(", ")}`
      : `No regression${inconclusiveNote(d)}.`,
  );
  if (d.storageChanges.length)
    lines.push(
      "",
      "**Storage changed** (reported, not failing)",
      "",
      ...d.storageChanges.map((c) => `- ${storageNote(c)}`),
    );
  if (notes.length) lines.push("", "**Excluded runs**", "", ...notes);
  return `${lines.join("\n")}\n`;
}
