/**
 * `ingestbench nightly PLAN`'s body: load the plan, run its entries as `bench` does, decide (harness/nightly/run.ts
 * decideNightly), print the summary (ui/nightly.ts) and write the JSON decision (--out) and the Markdown summary
 * (--markdown). With --json the CLI (harness/cli/commands/nightly.ts) prints the decision on stdout.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { checkResultsDir } from "../results/preflight.ts";
import { driveRuns, lockWaitMs, runsExitCode, type StackWork } from "../runner/drive.ts";
import { pulumiStacks } from "../provision/deployed.ts";
import { Progress, type ProgressMode } from "../runner/progress.ts";
import { loadScenarioFile, planCells } from "../runner/plan.ts";
import { nightlyMarkdown, renderNightly } from "../../ui/nightly.ts";
import { loadNightlyPlan } from "./plan.ts";
import { cellName, decideNightly, type NightlyPair } from "./run.ts";

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

/** What the command hands the CLI: its exit code and, with --json, the decision as a JSON document. */
export interface NightlyOutcome {
  exitCode: number;
  json?: string;
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
 * invocation, then decide. Returns the exit code (the runs' own, interrupted or errors, when worse, else the
 * decision's) and, with --json, the decision as the JSON document the CLI prints on stdout.
 */
export async function nightlyCommand(
  planFile: string,
  flags: NightlyFlags,
  projectRoot: string,
): Promise<NightlyOutcome> {
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
  if (result.interrupted) return { exitCode: runsCode };
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
  if (flags.out) await writeOut(flags.out, json);
  if (flags.markdown) await writeOut(flags.markdown, nightlyMarkdown(decision));
  return { exitCode: Math.max(runsCode, decision.exitCode), json: flags.json ? json : undefined };
}
