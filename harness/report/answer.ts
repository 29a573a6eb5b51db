/**
 * The answer a scenario's section opens with, in words: which stack (per cell) or which cell wins and by how much,
 * with its interval; the cost of a million rows per stack where run.json says it (Summary.cost). Between stacks the
 * winner is held against the runner-up with the comparisons' own statistics (harness/stats/compare.ts
 * compareSamples: ratio of medians, 90 % percentile bootstrap interval, "inconclusive" under 3 runs a side); a
 * one-stack sweep reads its best cell, knee and first saturating cell as the table after a bench finds them
 * (ui/bench-table.ts sweepOf) and holds the best cell against the first measured one the same way.
 */
import { fix, int, plural } from "../../ui/format.ts";
import { sweepOf } from "../../ui/bench-table.ts";
import type { StackRow } from "../results/across-stacks.ts";
import { med, rowsPerSecondOf } from "../results/caps.ts";
import type { RunRecord } from "../results/types.ts";
import { compareSamples, DEFAULT_MIN_CHANGE, type SampleComparison } from "../stats/compare.ts";
import type { ScenarioReport } from "./data.ts";

/** Cells named one by one in the answer; more are counted. */
const MAX_CELL_LINES = 6;

/** "(90 % interval [2.91, 3.08]; faster)", or why there is none ("one run a side: no interval"). */
export function intervalText(c: SampleComparison): string {
  if (c.n.baseline < 2 || c.n.contender < 2)
    return c.n.baseline === 1 && c.n.contender === 1
      ? "one run a side: no interval"
      : `n=${c.n.baseline}/${c.n.contender}: no interval`;
  if (c.ci === null) return c.reason;
  const ci = `${Math.round(c.confidence * 100)} % interval [${fix(c.ci[0], 2)}, ${fix(c.ci[1], 2)}]`;
  const verdict = c.inconclusive
    ? `inconclusive, n=${c.n.baseline}/${c.n.contender}`
    : c.significant
      ? "a real difference"
      : "within the noise";
  return `${ci}; ${verdict}`;
}

/** One cell across stacks: the fastest stack against the next, or null with fewer than two measured stacks. */
function cellAnswer(rows: StackRow[], cell: string | null): string | null {
  const ranked = rows
    .filter((r) => r.measured.length > 0 && Number.isFinite(r.medianRowsPerSecond))
    .sort((a, b) => b.medianRowsPerSecond - a.medianRowsPerSecond);
  const [win, next] = ranked;
  if (!win || !next) return null;
  const c = compareSamples(rowsPerSecondOf(next.measured), rowsPerSecondOf(win.measured));
  return (
    `${cell === null ? "" : `${cell}: `}${win.stack} is fastest at ${int(win.medianRowsPerSecond)} rows/s, ` +
    `${fix(c.ratio, 2, "x")} ${next.stack}'s ${int(next.medianRowsPerSecond)} (${intervalText(c)})`
  );
}

/** The stacks of the scenario with no usable run, said once. */
function unusedLine(rows: StackRow[]): string[] {
  const unused = [...new Set(rows.map((r) => r.stack))].filter((st) =>
    rows.filter((r) => r.stack === st).every((r) => r.measured.length === 0),
  );
  return unused.length ? [`no usable run (see the excluded runs): ${unused.join(", ")}`] : [];
}

/** Across stacks: per cell, the winner and its margin; the cells beyond MAX_CELL_LINES summed up. */
function stacksAnswer(rows: StackRow[]): string[] {
  const cells = [...new Set(rows.map((r) => r.cell))];
  const withCell = cells.length > 1;
  const lines = cells.flatMap((cell) => {
    const a = cellAnswer(
      rows.filter((r) => r.cell === cell),
      withCell ? cell : null,
    );
    return a ? [a] : [];
  });
  if (lines.length === 0)
    return ["fewer than two stacks have a usable run: nothing to compare", ...unusedLine(rows)];
  const wins = new Map<string, number>();
  for (const cell of cells) {
    const best = rows
      .filter((r) => r.cell === cell && r.measured.length > 0)
      .sort((a, b) => b.medianRowsPerSecond - a.medianRowsPerSecond)[0];
    if (best) wins.set(best.stack, (wins.get(best.stack) ?? 0) + 1);
  }
  const head = withCell
    ? [
        `fastest per cell: ${[...wins].map(([st, n]) => `${st} in ${n} of ${plural(cells.length, "cell")}`).join(", ")}`,
      ]
    : [];
  const shown = lines.slice(0, MAX_CELL_LINES);
  const more = lines.length - shown.length;
  return [
    ...head,
    ...shown,
    ...(more > 0 ? [`${plural(more, "more cell")}: see the table`] : []),
    ...unusedLine(rows),
  ];
}

/**
 * One stack over its cells: the best cell against the first measured one, the knee and the first cell that
 * saturates, as sweepOf finds them (the words are the report's own: the terminal's sweepLines clip to 100 columns).
 */
function sweepAnswer(rows: StackRow[]): string[] {
  const sweep = sweepOf(rows);
  const best = rows.find((r) => r.cell === sweep.best?.cell);
  const first = rows.find((r) => sweep.cells[0] === r.cell);
  if (!best || !first) return ["no cell has a usable run: nothing to answer (see the excluded runs)"];
  const lines = [
    best === first
      ? `${best.cell} is the best cell, at ${int(best.medianRowsPerSecond)} rows/s, and the first`
      : !(first.medianRowsPerSecond > 0)
        ? `${best.cell} is the best cell, at ${int(best.medianRowsPerSecond)} rows/s; the first cell, ${first.cell}, stored ${int(first.medianRowsPerSecond)} rows/s: no ratio`
        : (() => {
            const c = compareSamples(rowsPerSecondOf(first.measured), rowsPerSecondOf(best.measured));
            return `${best.cell} is the best cell, at ${int(best.medianRowsPerSecond)} rows/s: ${fix(c.ratio, 2, "x")} the first cell, ${first.cell} (${intervalText(c)})`;
          })(),
    ...sweep.knees.map((k) => {
      const along = k.axis === null ? "" : ` along ${k.axis} (${k.fixed})`;
      return k.cell === null
        ? `no knee${along}: rows/s still rises at ${k.axis === null ? "the last cell, " : ""}${k.last}`
        : `knee${along} at ${k.cell}: rows/s stops rising after it${sweep.singleRuns ? ` (one run a cell: a rise under ${Math.round(DEFAULT_MIN_CHANGE * 100)} % counts as none)` : " (the next cell's interval reaches 1)"}`;
    }),
    sweep.saturates
      ? `first cell that saturates: ${sweep.saturates.cell}, ${sweep.saturates.label} in ${sweep.saturates.runs} of ${plural(sweep.saturates.of, "run")}`
      : "no cell saturates (every run's saturation verdict: steady, oscillating or undetermined)",
  ];
  return lines;
}

/** Summary.cost (the cost change adds it to harness/results/types.ts; read here by shape). */
interface CostShape {
  coreSecondsPerMillionRows?: number | null;
  usdPerMillionRows?: number;
}
const costOf = (r: RunRecord): CostShape | undefined =>
  (r.summary as { cost?: CostShape } | null)?.cost ?? undefined;

/** "cost per million rows: large $0.0123; medium 3.1 core-s" (median over the runs), or [] when no run says. */
export function costLine(rows: StackRow[]): string[] {
  const withCell = new Set(rows.map((r) => r.cell)).size > 1;
  const parts = rows.flatMap((r) => {
    const name = withCell ? `${r.stack} ${r.cell}` : r.stack;
    const usd = med(r.measured, (x) => costOf(x)?.usdPerMillionRows);
    if (Number.isFinite(usd)) return [`${name} $${usd.toPrecision(3)}`];
    const cs = med(r.measured, (x) => costOf(x)?.coreSecondsPerMillionRows);
    return Number.isFinite(cs) ? [`${name} ${cs.toPrecision(3)} core-s`] : [];
  });
  return parts.length
    ? [`cost per million rows (the whole stack, median of the runs): ${parts.join("; ")}`]
    : [];
}

/** The answer of a scenario, one sentence a line (HTML list items, Markdown bullets). */
export function answerLines(s: ScenarioReport): string[] {
  const cells = new Set(s.rows.map((r) => r.cell));
  let lines: string[];
  if (s.stacks.length > 1) lines = stacksAnswer(s.rows);
  else if (cells.size > 1) lines = sweepAnswer(s.rows);
  else {
    const r = s.rows[0];
    lines =
      r && r.measured.length > 0
        ? [
            `one stack, one cell: nothing to compare; ${r.stack} stored ${int(r.medianRowsPerSecond)} rows/s (median of ${plural(r.measured.length, "run")}), bound by ${r.bottlenecks.join(", ") || "–"}`,
          ]
        : ["no usable run: nothing to answer (see the excluded runs)"];
  }
  return [...lines, ...costLine(s.rows)];
}
