/**
 * `ingestbench nightly PLAN`: run every (stack, scenario) entry of a plan as `ingestbench bench` does, then per
 * (stack, scenario) compare the latest invocation with the previous one (`compareRuns`, per cell) and decide:
 * a cell is a regression when its change is significant and slower — which needs at least 3 measured runs per night
 * (fewer is "inconclusive (n=…)"), and, when `ingestbench aa` has stored a noise floor for the stack and scenario,
 * a change above that floor (harness/stats/compare.ts). Prints the JSON decision (--json) and writes it to a file
 * (--out), and a Markdown summary (--markdown).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import Table from "cli-table3";
import { loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError, IngestbenchError } from "../../core/errors.ts";
import { compareRuns, type RunsComparison } from "../results/compare.ts";
import { prepareResultsDir } from "../results/preflight.ts";
import { loadRuns } from "../results/store.ts";
import { driveRuns, runsExitCode, type StackWork } from "../runner/drive.ts";
import { pulumiStacks } from "../provision/deployed.ts";
import { Progress, type ProgressMode } from "../runner/progress.ts";
import { loadScenarioFile, planCells } from "../runner/plan.ts";
import { loadNightlyPlan } from "./plan.ts";

export interface NightlyFlags {
  results: string;
  force?: boolean;
  /** same as progress "quiet" */
  quiet?: boolean;
  progress?: ProgressMode;
  /** overrides every entry's replicates (and the scenarios') */
  replicates?: number;
  /** where stack files are read from (default <project>/stacks) */
  stacksDir?: string;
  /** print the JSON decision on stdout (and nothing else there: the run results and the summary go to stderr) */
  json?: boolean;
  /** where to write the JSON decision (none when absent) */
  out?: string;
  /** where to write a Markdown summary (none when absent) */
  markdown?: string;
}

/** One (stack, scenario) pair to decide on. */
export interface NightlyPair {
  stack: string;
  scenario: string;
}

export interface NightlyCell {
  stack: string;
  scenario: string;
  cell: string;
  previousRowsPerSecond: number;
  latestRowsPerSecond: number;
  ratio: number | null;
  ci: [number, number] | null;
  change: "faster" | "slower" | "none" | null;
  significant: boolean;
  /** fewer than 3 measured runs in a night: no verdict */
  inconclusive: boolean;
  n: { previous: number; latest: number };
  /** the A/A noise floor applied (fraction), null without an A/A result for the stack and cell */
  noiseFloor: number | null;
  reason: string | null;
}

export interface NightlyPairResult extends NightlyPair {
  /** compared: latest vs previous; no-previous: only one night stored; error: the comparison was refused */
  status: "compared" | "no-previous" | "error";
  latest: string | null;
  previous: string | null;
  message: string | null;
  /** environment, version and limit differences between the two nights ("field: previous x; latest y") */
  differences: string[];
  cells: NightlyCell[];
}

export interface NightlyDecision {
  pairs: NightlyPairResult[];
  /** cells significantly slower than the previous night */
  regressions: NightlyCell[];
  /** cells compared without a verdict (fewer than 3 measured runs in a night) */
  inconclusive: NightlyCell[];
  /** 1 on a regression, 2 when a comparison was refused (e.g. component versions changed without --force), else 0 */
  exitCode: number;
}

const cellName = (c: NightlyCell): string => `${c.stack}/${c.scenario}/${c.cell}`;

/**
 * Compare, per pair, the latest invocation with the previous one and decide. No previous night is not an error.
 */
export async function decideNightly(resultsRoot: string, pairs: NightlyPair[], options: { force?: boolean } = {}): Promise<NightlyDecision> {
  const out: NightlyPairResult[] = [];
  for (const { stack, scenario } of pairs) {
    const invocations = [...new Set((await loadRuns(resultsRoot, stack, scenario)).map((r) => r.invocation))].sort();
    const latest = invocations[invocations.length - 1] ?? null;
    const previous = invocations[invocations.length - 2] ?? null;
    const base = { stack, scenario, latest, previous };
    if (latest === null || previous === null) {
      out.push({ ...base, status: "no-previous", message: latest === null ? "no results" : "no previous night to compare with", cells: [], differences: [] });
      continue;
    }
    let comparison: RunsComparison;
    try {
      comparison = await compareRuns(resultsRoot, scenario, stack, { baseline: "previous", contenders: ["latest"] }, { force: options.force });
    } catch (err) {
      if (!(err instanceof IngestbenchError)) throw err;
      out.push({ ...base, status: "error", message: err.message, cells: [], differences: [] });
      continue;
    }
    const cells = comparison.cells.map((c): NightlyCell => {
      const k = c.contenders[0]!;
      return {
        stack, scenario, cell: c.cell,
        previousRowsPerSecond: c.baseline.rowsPerSecond.median, latestRowsPerSecond: k.rowsPerSecond.median,
        ratio: k.comparison?.ratio ?? null, ci: k.comparison?.ci ?? null, change: k.comparison?.change ?? null,
        significant: k.comparison?.significant ?? false, inconclusive: k.comparison?.inconclusive ?? false,
        n: { previous: c.baseline.measured, latest: k.measured }, noiseFloor: k.comparison?.noiseFloor ?? null, reason: k.reason,
      };
    });
    const differences = comparison.differences.map((d) => `${d.field}: ${Object.entries(d.values).map(([k, v]) => `${k} ${v}`).join("; ")}`);
    out.push({ ...base, status: "compared", message: null, cells, differences });
  }
  const regressions = out.flatMap((p) => p.cells).filter((c) => c.significant && c.change === "slower");
  const inconclusive = out.flatMap((p) => p.cells).filter((c) => c.inconclusive);
  const exitCode = regressions.length > 0 ? 1 : out.some((p) => p.status === "error") ? 2 : 0;
  return { pairs: out, regressions, inconclusive, exitCode };
}

const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const ratioText = (c: NightlyCell): string => (c.ratio === null ? "–" : `${c.ratio.toFixed(2)}x`);
const ciText = (c: NightlyCell): string => (c.ci ? `[${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}]` : "–");
const floorText = (c: NightlyCell): string => (c.noiseFloor === null ? "–" : `±${(c.noiseFloor * 100).toFixed(1)} %`);
const verdict = (c: NightlyCell): string =>
  (c.significant && c.change === "slower" ? "REGRESSION" : c.significant ? c.change ?? "–" : c.change === null ? "not compared"
    : c.inconclusive ? `inconclusive (n=${c.n.previous}/${c.n.latest})` : "no change");
const inconclusiveNote = (d: NightlyDecision): string =>
  (d.inconclusive.length ? `; ${d.inconclusive.length} cell(s) inconclusive: fewer than 3 measured runs in a night (give replicates: 3 or more)` : "");

/** The summary table and the verdict, as printed. */
export function renderNightly(d: NightlyDecision): string {
  const table = new Table({ head: ["stack", "scenario", "cell", "previous rows/s", "latest rows/s", "ratio", "90 % CI", "A/A floor", "verdict"], style: { head: [], border: [] } });
  const notes: string[] = [];
  for (const p of d.pairs) {
    if (p.status !== "compared") {
      table.push([p.stack, p.scenario, "–", "–", "–", "–", "–", "–", p.status === "no-previous" ? "no previous night" : "refused"]);
      notes.push(`${p.stack}/${p.scenario}: ${p.message}`);
    }
    if (p.differences.length) notes.push(`${p.stack}/${p.scenario}: differences between the nights:\n${p.differences.map((d) => `  ${d}`).join("\n")}`);
    for (const c of p.cells) table.push([c.stack, c.scenario, c.cell, int(c.previousRowsPerSecond), int(c.latestRowsPerSecond), ratioText(c), ciText(c), floorText(c), verdict(c)]);
  }
  const tail = d.regressions.length > 0
    ? `REGRESSION: ${d.regressions.length} cell(s) significantly slower than the previous night: ${d.regressions.map((c) => `${cellName(c)} (${ratioText(c)})`).join(", ")}`
    : d.pairs.every((p) => p.status === "no-previous")
      ? "no previous night: nothing to compare with yet (this night is the baseline for the next)"
      : d.exitCode === 2 ? `a comparison was refused (see above); no regression among the cells compared${inconclusiveNote(d)}` : `no regression${inconclusiveNote(d)}`;
  return `${table.toString()}${notes.length ? `\n${notes.join("\n")}` : ""}\n${tail}`;
}

/** A Markdown summary (for a CI job summary). */
export function nightlyMarkdown(d: NightlyDecision): string {
  const lines = ["## ingestbench nightly", "", "| stack | scenario | cell | previous rows/s | latest rows/s | ratio | 90 % CI | A/A floor | verdict |", "|---|---|---|---:|---:|---:|---|---:|---|"];
  for (const p of d.pairs) {
    if (p.status !== "compared") lines.push(`| ${p.stack} | ${p.scenario} | – | – | – | – | – | – | ${p.message ?? p.status} |`);
    for (const c of p.cells) lines.push(`| ${c.stack} | ${c.scenario} | ${c.cell} | ${int(c.previousRowsPerSecond)} | ${int(c.latestRowsPerSecond)} | ${ratioText(c)} | ${ciText(c)} | ${floorText(c)} | ${verdict(c)} |`);
  }
  lines.push("", d.regressions.length > 0 ? `**Regression** in ${d.regressions.map((c) => `\`${cellName(c)}\``).join(", ")}` : `No regression${inconclusiveNote(d)}.`);
  return `${lines.join("\n")}\n`;
}

/** Write one of the command's files. @throws ConfigurationError E_NIGHTLY_OUT naming the file when it cannot be written */
async function writeOut(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (err) {
    throw new ConfigurationError("E_NIGHTLY_OUT", `cannot write ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Load the plan, every stack and every scenario (so a typo fails before the first run), run all entries in one
 * invocation, then decide. Returns the exit code: the runs' own (interrupted, errors) when worse, else the decision's.
 */
export async function nightlyCommand(planFile: string, flags: NightlyFlags, projectRoot: string): Promise<number> {
  const plan = loadNightlyPlan(planFile);
  // --json owns stdout; jsonl progress would share it
  if (flags.json && flags.progress === "jsonl") throw new ConfigurationError("E_FLAG", "--json prints the decision on stdout, where --progress jsonl prints its events: give one of them");
  const resultsRoot = prepareResultsDir(flags.results);
  const work: StackWork[] = [];
  const pairs: NightlyPair[] = [];
  plan.entries.forEach((e, i) => {
    const where = (err: unknown): never => {
      if (err instanceof ConfigurationError) throw new ConfigurationError(err.code, `${planFile}: entries.${i}: ${err.message}`, { cause: err });
      throw err;
    };
    let stack, scenario;
    try {
      stack = loadStack(e.stack, flags.stacksDir ?? path.join(projectRoot, "stacks"));
      scenario = loadScenarioFile(e.scenario);
    } catch (err) {
      return where(err);
    }
    const plans = planCells(scenario, e.scenario, { replicates: flags.replicates ?? e.replicates, duration: e.duration, warmup: e.warmup });
    work.push({ stack, plans });
    pairs.push({ stack: stack.name, scenario: scenario.name });
  });
  const progress = new Progress(flags.quiet ? "quiet" : flags.progress, flags.json ? { stdout: process.stderr, stderr: process.stderr } : undefined);
  const result = await driveRuns(work, { resultsRoot, invocation: new Date().toISOString(), projectRoot, reporter: progress, deployed: pulumiStacks({ projectRoot, quiet: progress.mode === "quiet" }) });
  const runsCode = runsExitCode(result);
  if (result.interrupted) return runsCode;
  const decision = await decideNightly(resultsRoot, pairs, { force: flags.force });
  progress.result(`\n${renderNightly(decision)}`);
  progress.event("nightly", {
    exitCode: Math.max(runsCode, decision.exitCode), runsExitCode: runsCode,
    regressions: decision.regressions.map(cellName), inconclusive: decision.inconclusive.map(cellName),
  });
  const json = `${JSON.stringify({ plan: planFile, runsExitCode: runsCode, ...decision }, null, 2)}\n`;
  if (flags.json) process.stdout.write(json);
  if (flags.out) await writeOut(flags.out, json);
  if (flags.markdown) await writeOut(flags.markdown, nightlyMarkdown(decision));
  return Math.max(runsCode, decision.exitCode);
}
