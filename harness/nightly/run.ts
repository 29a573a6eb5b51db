/**
 * `ingestbench nightly PLAN`: run every (stack, scenario) entry of a plan as `ingestbench bench` does, then per
 * (stack, scenario) and cell test tonight against a baseline of the previous K good nights in the same environment
 * (harness/nightly/window.ts: the method, the floor, the drift test), with Holm's correction over every cell tested
 * tonight (harness/stats/multiple.ts). Each cell also carries its storage per million rows against the same
 * baseline nights, shown, and reported when it changes, never failing (harness/nightly/storage.ts). Runs that are
 * not ok, whose caps were not enforced, or of another environment are left out and listed with their reasons
 * (harness/results/eligibility.ts). Prints the summary, the JSON decision (--json) and writes it to a file (--out),
 * and a Markdown summary (--markdown). With `requireHistory` a pair with no earlier night is a failure (exit 2,
 * E_NIGHTLY_HISTORY): the job lost its history; the first night bootstraps by running without it.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import Table from "cli-table3";
import { loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError, IngestbenchError } from "../../core/errors.ts";
import { excludedLines, type ExcludedRun } from "../results/eligibility.ts";
import { diffFingerprints, groupFingerprint, describeDifference } from "../results/fingerprint.ts";
import { floorsOf } from "../results/noise-floor.ts";
import { checkResultsDir } from "../results/preflight.ts";
import { loadRuns } from "../results/store.ts";
import { driveRuns, lockWaitMs, runsExitCode, type StackWork } from "../runner/drive.ts";
import { pulumiStacks } from "../provision/deployed.ts";
import { Progress, type ProgressMode } from "../runner/progress.ts";
import { loadScenarioFile, planCells } from "../runner/plan.ts";
import { loadNightlyPlan } from "./plan.ts";
import {
  DEFAULT_ALPHA,
  DEFAULT_WINDOW,
  nightsOf,
  settle,
  settleDrift,
  testLatestNight,
  type CellTest,
  type Night,
} from "./window.ts";
import { fix, int } from "../../ui/format.ts";
import { nightlyStorage, type NightlyStorage } from "./storage.ts";

export interface NightlyFlags {
  results: string;
  force?: boolean;
  /** same as progress "quiet" */
  quiet?: boolean;
  verbose?: boolean;
  progress?: ProgressMode;
  /** overrides every entry's replicates (and the scenarios') */
  replicates?: number;
  /** where stack files are read from (default <project>/stacks) */
  stacksDir?: string;
  /** --lock-wait: how long to wait for a stack another run holds (a duration) */
  lockWait?: string;
  /** print the JSON decision on stdout (and nothing else there: the run results and the summary go to stderr) */
  json?: boolean;
  /** where to write the JSON decision (none when absent) */
  out?: string;
  /** where to write a Markdown summary (none when absent) */
  markdown?: string;
  /** baseline nights K (overrides the plan's `window`; default 7) */
  window?: number;
  /** a pair without an earlier night fails the job (exit 2) instead of bootstrapping */
  requireHistory?: boolean;
}

/** One (stack, scenario) pair to decide on. */
export interface NightlyPair {
  stack: string;
  scenario: string;
}

/** One cell's verdict tonight (the fields of window.ts CellTest, and where it belongs). */
export interface NightlyCell extends CellTest {
  stack: string;
  scenario: string;
  /** the baseline's median rows/s (the same as baselineRowsPerSecond; the name nightly.json has always used) */
  previousRowsPerSecond: number;
  /** bytes on the sink's disk per million rows tonight against the same baseline nights (./storage.ts); null: none recorded */
  storage: NightlyStorage | null;
}

export interface NightlyPairResult extends NightlyPair {
  /**
   * compared: tested against a baseline; no-previous: no earlier night (the first night, bootstrapping);
   * no-history: no earlier night while history was required (a failure); environment-changed: earlier nights exist
   * but none in tonight's environment, no verdict; error: the pair could not be read
   */
  status: "compared" | "no-previous" | "no-history" | "environment-changed" | "error";
  latest: string | null;
  /** the most recent baseline night (null without one) */
  previous: string | null;
  /** every earlier night stored for the pair */
  nights: number;
  message: string | null;
  /** the error code when the pair failed: E_NIGHTLY_HISTORY (history required, none stored); null otherwise */
  code: string | null;
  /** environment, version and limit differences between the most recent earlier night and tonight ("field: previous x; latest y") */
  differences: string[];
  /** runs left out tonight and in the baseline nights, with their reasons */
  excluded: ExcludedRun[];
  cells: NightlyCell[];
}

export interface NightlyDecision {
  /** the baseline size K and the significance level used */
  window: number;
  alpha: number;
  pairs: NightlyPairResult[];
  /** cells significantly slower than their baseline */
  regressions: NightlyCell[];
  /** cells compared without a verdict (fewer than 3 measured runs a side in the runs test) */
  inconclusive: NightlyCell[];
  /** cells whose value drifts over the window (reported, never failing) */
  drifts: NightlyCell[];
  /** cells whose storage per million rows left their baseline nights' range by at least 5 % (./storage.ts; reported, never failing) */
  storageChanges: NightlyCell[];
  /** 1 on a regression, 2 when a pair could not be read or history was required and missing, else 0 */
  exitCode: number;
}

export interface DecideOptions {
  /** use baseline nights of any environment (the differences are listed) */
  force?: boolean;
  window?: number;
  requireHistory?: boolean;
  alpha?: number;
  minChange?: number;
}

const cellName = (c: NightlyCell): string => `${c.stack}/${c.scenario}/${c.cell}`;

/** "field: previous x; latest y" between the most recent earlier night with eligible runs and tonight. */
function nightDifferences(previous: Pick<Night, "used"> | undefined, latest: Pick<Night, "used">): string[] {
  if (!previous || previous.used.length === 0 || latest.used.length === 0) return [];
  return diffFingerprints([
    { label: "previous", fingerprint: groupFingerprint(previous.used, { limits: true }) },
    { label: "latest", fingerprint: groupFingerprint(latest.used, { limits: true }) },
  ]).map(describeDifference);
}

/**
 * Decide tonight for every pair: nights from results/<stack>/<scenario>/, tonight's cells against their window
 * baselines (harness/nightly/window.ts), Holm over every tested cell of every pair, drift per cell.
 */
export async function decideNightly(
  resultsRoot: string,
  pairs: NightlyPair[],
  options: DecideOptions = {},
): Promise<NightlyDecision> {
  const window = options.window ?? DEFAULT_WINDOW;
  const alpha = options.alpha ?? DEFAULT_ALPHA;
  const out: NightlyPairResult[] = [];
  for (const { stack, scenario } of pairs) {
    const nights = nightsOf(await loadRuns(resultsRoot, stack, scenario));
    const tonight = nights[nights.length - 1];
    const base = {
      stack,
      scenario,
      latest: tonight?.invocation ?? null,
      previous: null,
      nights: Math.max(0, nights.length - 1),
      differences: [],
      excluded: tonight?.excluded ?? [],
      cells: [],
      code: null,
    };
    if (!tonight || nights.length === 1) {
      const message = !tonight
        ? "no results"
        : options.requireHistory
          ? "no previous night stored, but history was required (--require-history): the results of earlier nights were not restored; bootstrap a new history explicitly by running without --require-history"
          : "no previous night to compare with (this night is the baseline for the next)";
      out.push({
        ...base,
        status: options.requireHistory ? "no-history" : "no-previous",
        message,
        code: options.requireHistory ? "E_NIGHTLY_HISTORY" : null,
      });
      continue;
    }
    let cells: NightlyCell[];
    try {
      const tests = testLatestNight(nights, {
        window,
        force: options.force,
        alpha,
        minChange: options.minChange,
        aaFloors: floorsOf(resultsRoot, stack, scenario, true),
      });
      cells = tests.map((t) => ({
        ...t,
        stack,
        scenario,
        previousRowsPerSecond: t.baselineRowsPerSecond,
        storage: nightlyStorage(nights, t, options.minChange),
      }));
    } catch (err) {
      if (!(err instanceof IngestbenchError)) throw err;
      out.push({ ...base, status: "error", message: err.message, code: err.code });
      continue;
    }
    const baselineInvocations = new Set(cells.flatMap((c) => c.baselineNights.map((n) => n.invocation)));
    const previous = [...baselineInvocations].sort().at(-1) ?? null;
    const earlier = nights
      .slice(0, -1)
      .filter((n) => n.used.length > 0)
      .at(-1);
    const envChanged =
      cells.length > 0 &&
      cells.every((c) => c.environmentChanged || c.method === null) &&
      cells.some((c) => c.environmentChanged);
    out.push({
      ...base,
      previous,
      status: envChanged ? "environment-changed" : "compared",
      message: envChanged
        ? `environment changed, no verdict: tonight ran on ${tonight.environment}; the last earlier night on ${earlier?.environment ?? "–"}`
        : null,
      differences: nightDifferences(nights.find((n) => n.invocation === previous) ?? earlier, tonight),
      excluded: [
        ...tonight.excluded,
        ...nights.filter((n) => baselineInvocations.has(n.invocation)).flatMap((n) => n.excluded),
      ],
      cells,
    });
  }
  const all = out.flatMap((p) => p.cells);
  settle(all, alpha, options.minChange);
  settleDrift(all, alpha);
  const regressions = all.filter((c) => c.significant && c.change === "slower");
  const inconclusive = all.filter((c) => c.inconclusive);
  const drifts = all.filter((c) => c.drift?.detected);
  const storageChanges = all.filter((c) => c.storage?.change === "larger" || c.storage?.change === "smaller");
  const exitCode =
    regressions.length > 0 ? 1 : out.some((p) => p.status === "error" || p.status === "no-history") ? 2 : 0;
  return { window, alpha, pairs: out, regressions, inconclusive, drifts, storageChanges, exitCode };
}

const ratioText = (c: NightlyCell): string => (c.ratio === null ? "–" : `${c.ratio.toFixed(2)}x`);
const ciText = (c: NightlyCell): string => (c.ci ? `[${c.ci[0].toFixed(2)}, ${c.ci[1].toFixed(2)}]` : "–");
const floorText = (c: NightlyCell): string =>
  c.noiseFloor === null
    ? "–"
    : `±${(c.noiseFloor * 100).toFixed(1)} %${c.noiseFloorSource === "nights" ? " (nights)" : " (A/A)"}`;
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
  const per = `${d.perDay >= 0 ? "+" : ""}${(d.perDay * 100).toFixed(2)} %/day`;
  return d.detected ? `${d.direction} ${per}` : `none (${per})`;
};
/** MiB per million rows tonight, with its ratio to the baseline nights (./storage.ts). */
const storageText = (c: NightlyCell): string => {
  const s = c.storage;
  if (!s) return "–";
  const mib = fix(s.latestBytesPerMillionRows / 2 ** 20, 1);
  return s.ratio === null ? mib : `${mib} (${s.ratio.toFixed(2)}x)`;
};
/** The note of a cell whose storage changed. */
const storageNote = (c: NightlyCell): string => {
  const s = c.storage!;
  const values = s.baselineNights.map((b) => b.bytesPerMillionRows / 2 ** 20);
  return `${cellName(c)}: storage ${s.change}: ${fix(s.latestBytesPerMillionRows / 2 ** 20, 2)} MiB per million rows, ${s.ratio!.toFixed(2)}x the baseline nights' ${fix(s.baselineBytesPerMillionRows! / 2 ** 20, 2)} (range ${fix(Math.min(...values), 2)}–${fix(Math.max(...values), 2)}; reported, not failing)`;
};
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
      if (c.storage?.change === "larger" || c.storage?.change === "smaller") notes.push(storageNote(c));
      if (c.drift?.detected)
        notes.push(
          `${cellName(c)}: drifting ${c.drift.direction}: Theil–Sen ${(c.drift.perDay * 100).toFixed(2)} %/day, ${(c.drift.overWindow * 100).toFixed(1)} % over ${c.drift.days.toFixed(0)} days (Mann–Kendall p = ${c.drift.p.toPrecision(2)}, Holm ${c.drift.pAdjusted.toPrecision(2)})`,
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

/** Write one of the command's files. @throws ConfigurationError E_NIGHTLY_OUT naming the file when it cannot be written */
async function writeOut(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (err) {
    throw new ConfigurationError("E_NIGHTLY_OUT", `cannot write ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * Load the plan, every stack and every scenario (so a typo fails before the first run), run all entries in one
 * invocation, then decide. Returns the exit code: the runs' own (interrupted, errors) when worse, else the decision's.
 */
export async function nightlyCommand(
  planFile: string,
  flags: NightlyFlags,
  projectRoot: string,
): Promise<number> {
  const plan = loadNightlyPlan(planFile);
  // --json owns stdout; jsonl progress would share it
  if (flags.json && flags.progress === "jsonl")
    throw new ConfigurationError(
      "E_FLAG",
      "--json prints the decision on stdout, where --progress jsonl prints its events: give one of them",
    );
  const resultsRoot = checkResultsDir(flags.results);
  const work: StackWork[] = [];
  const pairs: NightlyPair[] = [];
  plan.entries.forEach((e, i) => {
    const where = (err: unknown): never => {
      if (err instanceof ConfigurationError)
        throw new ConfigurationError(err.code, `${planFile}: entries.${i}: ${err.message}`, { cause: err });
      throw err;
    };
    let stack, scenario;
    try {
      stack = loadStack(e.stack, flags.stacksDir ?? path.join(projectRoot, "stacks"));
      scenario = loadScenarioFile(e.scenario);
    } catch (err) {
      return where(err);
    }
    const plans = planCells(scenario, e.scenario, {
      replicates: flags.replicates ?? e.replicates,
      duration: e.duration,
      warmup: e.warmup,
    });
    work.push({ stack, plans });
    pairs.push({ stack: stack.name, scenario: scenario.name });
  });
  const progress = new Progress(
    flags.quiet ? "quiet" : flags.progress,
    flags.json ? { stdout: process.stderr, stderr: process.stderr } : undefined,
    undefined,
    { verbose: flags.verbose },
  );
  const result = await driveRuns(work, {
    resultsRoot,
    invocation: new Date().toISOString(),
    projectRoot,
    reporter: progress,
    deployed: pulumiStacks({ projectRoot, quiet: progress.mode === "quiet" }),
    lockWaitMs: lockWaitMs(flags.lockWait),
  });
  const runsCode = runsExitCode(result);
  if (result.interrupted) return runsCode;
  const decision = await decideNightly(resultsRoot, pairs, {
    force: flags.force,
    window: flags.window ?? plan.window,
    requireHistory: flags.requireHistory,
  });
  progress.result(`\n${renderNightly(decision)}`);
  progress.event("nightly", {
    exitCode: Math.max(runsCode, decision.exitCode),
    runsExitCode: runsCode,
    regressions: decision.regressions.map(cellName),
    inconclusive: decision.inconclusive.map(cellName),
    drifts: decision.drifts.map(cellName),
    storageChanges: decision.storageChanges.map(cellName),
    missingHistory: decision.pairs
      .filter((p) => p.status === "no-history")
      .map((p) => `${p.stack}/${p.scenario}`),
  });
  const json = `${JSON.stringify({ plan: planFile, runsExitCode: runsCode, ...decision }, null, 2)}\n`;
  if (flags.json) process.stdout.write(json);
  if (flags.out) await writeOut(flags.out, json);
  if (flags.markdown) await writeOut(flags.markdown, nightlyMarkdown(decision));
  return Math.max(runsCode, decision.exitCode);
}
