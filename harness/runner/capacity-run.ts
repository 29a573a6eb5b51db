/**
 * `ingestbench capacity` end to end: check the flags and the scenario (an open loop, one cell), then per stack run
 * the capacity search of ./capacity.ts, each step one real run made by the runner as `bench` makes it (driveItems,
 * ./drive.ts: provision, warmup, measure, drain, ledger, teardown), stored under
 * results/<stack>/<scenario>.capacity/<run-id>/, judge it from its run.json and series.jsonl, and store the search in
 * results/<stack>/<scenario>.capacity/capacity.json (harness/results/capacity.ts). With several stacks, print the
 * capacity ratio. The rules are docs/capacity.md and docs/decisions/0010-capacity-search.md.
 */
import type { StackSpec } from "../../core/limits.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { parseRunDuration } from "../../core/units.ts";
import { displayPath, fieldLocation } from "../../core/yaml.ts";
import {
  CAPACITY_SUFFIX,
  writeCapacity,
  type CapacityFile,
  type CapacityResult,
  type CapacityRow,
} from "../results/capacity.ts";
import { renderCapacity, renderCapacityComparison, stepLine } from "../../ui/capacity.ts";
import { pct } from "../../ui/format.ts";
import { runDir, loadSeries } from "../results/store.ts";
import type { RunRecord, SeriesPoint } from "../results/types.ts";
import type { CellPlan } from "./cell-plan.ts";
import {
  DEFAULT_BOUNDS,
  judgeStep,
  searchCapacity,
  type CapacityBounds,
  type SearchOptions,
  type StepFunction,
  type StepOffer,
} from "./capacity.ts";
import { checkCellsOnStack, driveItems, EXIT_BY_KIND, type DeployedStacks } from "./drive.ts";
import { loadScenarioFile, planCells } from "./plan.ts";
import { Progress, type ProgressMode } from "./progress.ts";
import { GROWTH_MIN_MS, MIN_WINDOW } from "./saturation.ts";
import { collectorHosts } from "./versions.ts";

/** The command line of `ingestbench capacity` (harness/cli/commands/capacity.ts), as commander hands it over. */
export interface CapacityFlags {
  results: string;
  /** the matrix cell to search (required when the scenario has several) */
  cell?: string;
  /** events/s of the first step (default: the scenario's rate) */
  startRate?: string;
  factor?: string;
  tolerance?: string;
  maxSteps?: number;
  /** each step's measured duration and warmup (durations) */
  stepDuration?: string;
  warmup?: string;
  p99Bound?: string;
  maxLagSlope?: string;
  minShare?: string;
  lockWait?: string;
  progress?: ProgressMode;
  quiet?: boolean;
  verbose?: boolean;
}

/** Defaults of the search (docs/capacity.md). */
export const CAPACITY_DEFAULTS = { factor: 2, tolerance: 0.1, maxSteps: 8, stepDuration: "10s" } as const;

/** A number flag in (lo, hi] (or [lo, hi] with `inclusive`). @throws ConfigurationError E_FLAG naming the flag */
function numberFlag(
  flag: string,
  raw: string | undefined,
  fallback: number,
  lo: number,
  hi: number,
  inclusive = false,
): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || (inclusive ? n < lo : n <= lo) || n > hi) {
    throw new ConfigurationError(
      "E_FLAG",
      `--${flag} ${raw}: a number ${inclusive ? "≥" : ">"} ${lo}${Number.isFinite(hi) ? ` and ≤ ${hi}` : ""} is needed`,
      { field: flag },
    );
  }
  return n;
}

/** A duration flag in ms. @throws ConfigurationError E_FLAG naming the flag */
function durationFlag(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  try {
    return parseRunDuration(raw);
  } catch (err) {
    throw new ConfigurationError("E_FLAG", `--${flag} ${raw}: ${(err as Error).message}`, { field: flag });
  }
}

/**
 * The one cell the search runs, with the step's timing, checked: an open-loop generator (a numeric `rate`, no
 * fixed `requests` workload) and enough samples per step for the saturation verdict.
 * @throws ConfigurationError E_CAPACITY_CLOSED_LOOP for a closed loop or a fixed workload (at the scenario's
 *   generator, file:line:col), E_FLAG for an unknown or missing --cell or a step shorter than the verdict needs
 */
export function capacityPlan(
  scenarioFile: string,
  flags: Pick<CapacityFlags, "cell" | "stepDuration" | "warmup">,
): CellPlan {
  const scenario = loadScenarioFile(scenarioFile);
  const plans = planCells(scenario, scenarioFile, {
    replicates: 1,
    duration: flags.stepDuration ?? CAPACITY_DEFAULTS.stepDuration,
    durationFlag: "step-duration",
    warmup: flags.warmup,
  });
  const ids = plans.map((p) => p.cell);
  if (flags.cell === undefined && plans.length > 1) {
    throw new ConfigurationError(
      "E_FLAG",
      `scenario ${scenario.name} has ${plans.length} cells: name the one to search with --cell (${ids.join(", ")})`,
      { field: "cell" },
    );
  }
  const plan = flags.cell === undefined ? plans[0]! : plans.find((p) => p.cell === flags.cell);
  if (!plan)
    throw new ConfigurationError(
      "E_FLAG",
      `--cell ${flags.cell}: scenario ${scenario.name} has no such cell (${ids.join(", ")})`,
      { field: "cell" },
    );
  const g = plan.generator;
  const closed =
    typeof g.config.rate !== "number"
      ? `its rate is ${JSON.stringify(g.config.rate ?? "max")} (a closed loop: each batch waits for the last, so the stack sets the rate)`
      : g.config.requests !== undefined
        ? `it sends a fixed workload (requests: ${JSON.stringify(g.config.requests)}), which ends when it is sent`
        : null;
  if (closed) {
    const where = fieldLocation(
      scenarioFile,
      ["generator", g.name, typeof g.config.rate === "number" ? "requests" : "rate"],
      "key",
    );
    throw new ConfigurationError(
      "E_CAPACITY_CLOSED_LOOP",
      `${where}: capacity searches the highest offered rate of an open-loop generator, and the "${g.name}" generator of scenario ${scenario.name} is not one: ${closed}; give it a rate in events/s (e.g. rate: 1000) and no requests`,
      { field: `generator.${g.name}.rate`, location: where.replace(/:\d+: .*$/, "") },
    );
  }
  if (plan.durationMs < MIN_WINDOW * plan.intervalMs) {
    throw new ConfigurationError(
      "E_FLAG",
      `--step-duration ${flags.stepDuration ?? CAPACITY_DEFAULTS.stepDuration}: a step must hold at least ${MIN_WINDOW} sampling intervals (${MIN_WINDOW} × ${plan.intervalMs} ms) for the saturation verdict`,
      { field: "step-duration" },
    );
  }
  return plan;
}

/** The bounds and the search options from the flags, with the scenario's rate as the default start. @throws ConfigurationError E_FLAG */
export function capacityOptions(
  flags: CapacityFlags,
  plan: CellPlan,
): { bounds: CapacityBounds; search: SearchOptions } {
  const maxSteps = flags.maxSteps ?? CAPACITY_DEFAULTS.maxSteps;
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new ConfigurationError("E_FLAG", `--max-steps ${maxSteps}: a positive integer is needed`, {
      field: "max-steps",
    });
  return {
    bounds: {
      p99BoundMs: durationFlag("p99-bound", flags.p99Bound, DEFAULT_BOUNDS.p99BoundMs),
      maxLagSlope: numberFlag(
        "max-lag-slope",
        flags.maxLagSlope,
        DEFAULT_BOUNDS.maxLagSlope,
        0,
        Infinity,
        true,
      ),
      minShare: numberFlag("min-share", flags.minShare, DEFAULT_BOUNDS.minShare, 0, 1),
    },
    search: {
      startRate: numberFlag("start-rate", flags.startRate, plan.generator.config.rate as number, 0, Infinity),
      factor: numberFlag("factor", flags.factor, CAPACITY_DEFAULTS.factor, 1, Infinity),
      tolerance: numberFlag("tolerance", flags.tolerance, CAPACITY_DEFAULTS.tolerance, 0, Infinity),
      maxSteps,
    },
  };
}

/** Generator entry points a `rate` applies to on this stack: one per collector host, else one (harness/runner/run.ts). */
export function rateEntries(stack: StackSpec, plan: Pick<CellPlan, "collector">): number {
  return plan.collector ? Math.max(1, collectorHosts(Object.keys(stack.hosts)).length) : 1;
}

/**
 * What a step at `rate` offers (./capacity.ts StepOffer): rate × entries events/s over warmup + measurement, one
 * batch per connection and entry as slack, and one batch period (batch / rate per entry) as the lag's floor.
 */
export function stepOffer(plan: CellPlan, rate: number, entries: number): StepOffer {
  const batch = typeof plan.generator.config.batch === "number" ? plan.generator.config.batch : 1;
  const connections =
    typeof plan.generator.config.connections === "number" ? plan.generator.config.connections : 1;
  return {
    rate,
    offeredPerSec: rate * entries,
    loadSeconds: (plan.warmupMs + plan.durationMs) / 1000,
    slackEvents: batch * connections * entries,
    lagFloorMs: Math.max(GROWTH_MIN_MS, (batch / rate) * 1000),
  };
}

/** The step's plan: the cell at `rate`, stored under <scenario>.capacity, its rate recorded in the scenario config. */
function stepPlan(plan: CellPlan, rate: number, index: number): CellPlan {
  return {
    ...plan,
    scenario: `${plan.scenario}${CAPACITY_SUFFIX}`,
    generator: { ...plan.generator, config: { ...plan.generator.config, rate } },
    scenarioConfig: { ...(plan.scenarioConfig as Record<string, unknown>), capacity: { step: index, rate } },
  };
}

export interface CapacityCommandOptions {
  projectRoot: string;
  resultsRoot: string;
  stacks: StackSpec[];
  /** runs docker and azure stacks (harness/provision/deployed.ts pulumiStacks); each step deploys and destroys */
  deployed?: DeployedStacks;
  lockWaitMs: number;
  /** aborts the search (besides SIGINT/SIGTERM) */
  signal?: AbortSignal;
}

/**
 * Run the search on every stack, store and print each result, then the comparison. Returns the exit code: 130/143
 * when interrupted, the step error's kind (2, 3 or 4) when a step errored, 1 when a stack sustained no rate, else 0.
 * @throws ConfigurationError for a bad scenario, cell or flag (before anything is provisioned)
 */
export async function capacityCommand(
  scenarioFile: string,
  flags: CapacityFlags,
  o: CapacityCommandOptions,
): Promise<number> {
  const plan = capacityPlan(scenarioFile, flags);
  const { bounds, search } = capacityOptions(flags, plan);
  // every stack is checked before the first step provisions anything (driveItems checks again per step)
  for (const stack of o.stacks)
    checkCellsOnStack(stack, [plan], stack.platform === "local" ? undefined : o.deployed);
  const progress = new Progress(flags.quiet ? "quiet" : flags.progress, undefined, undefined, {
    verbose: flags.verbose,
  });
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => controller.abort(sig);
  const onExternal = (): void => controller.abort(o.signal?.reason ?? "SIGINT");
  o.signal?.addEventListener("abort", onExternal, { once: true });
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const rows: CapacityRow[] = [];
  let code = 0;
  // what the steps so far spent besides their load (provision, drain, ledger, teardown): the next step's estimate;
  // before the first step ends none is assumed (the platform's default fits a bench run of millions of rows, not a step)
  const runs: StepRuns = { overhead: [] };
  try {
    for (const stack of o.stacks) {
      if (controller.signal.aborted) break;
      const invocation = new Date().toISOString();
      const entries = rateEntries(stack, plan);
      progress.notice(
        `capacity of ${plan.scenario} (${plan.cell}) on ${stack.name}: from ${search.startRate}/s, ×${search.factor} then bisection to ${pct(search.tolerance)}, at most ${search.maxSteps} steps of ${(plan.warmupMs / 1000).toFixed(0)} s + ${(plan.durationMs / 1000).toFixed(0)} s`,
      );
      const seen: StepsSeen = { first: null, last: null };
      const result = await searchCapacity(
        search,
        capacityStep(
          { stack, plan, invocation, entries, bounds, o, progress, signal: controller.signal },
          runs,
          seen,
        ),
        (s) => progress.result(stepLine(s, search.maxSteps)),
      );
      const file = capacityFile(
        scenarioFile,
        plan,
        stack,
        invocation,
        entries,
        bounds,
        search,
        seen.first,
        result,
      );
      if (result.steps.length > 0) {
        const where = await writeCapacity(o.resultsRoot, file);
        progress.result(`\n${renderCapacity(file, displayPath(where))}`);
        progress.event("capacity", { file: where, ...file });
      }
      rows.push({ stack: stack.name, file });
      if (result.stopped === "interrupted") break;
      if (result.stopped === "error")
        code = Math.max(code, EXIT_BY_KIND[seen.last?.error?.kind ?? "run"] ?? 3);
      else if (result.sustainableRate === null) code = Math.max(code, 1);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    o.signal?.removeEventListener("abort", onExternal);
  }
  if (controller.signal.aborted) return controller.signal.reason === "SIGTERM" ? 143 : 130;
  if (rows.length > 1) progress.result(`\n${renderCapacityComparison(plan.scenario, rows)}`);
  return code;
}

/** The first and the last step's run record on one stack. */
interface StepsSeen {
  first: RunRecord | null;
  last: RunRecord | null;
}

/** What the steps so far spent besides their load, across stacks (Progress.overheadMeasured). */
interface StepRuns {
  overhead: ReadonlyArray<{ before: number; after: number }>;
}

/** Where a step runs and how it is judged. */
interface StepSetting {
  stack: StackSpec;
  plan: CellPlan;
  invocation: string;
  entries: number;
  bounds: CapacityBounds;
  o: CapacityCommandOptions;
  progress: Progress;
  signal: AbortSignal;
}

/**
 * The search's step on one stack (./capacity.ts StepFunction): the cell at `rate` as one planned run (driveItems,
 * with a progress display of its own), judged from its record and series; null when interrupted.
 */
function capacityStep(t: StepSetting, runs: StepRuns, seen: StepsSeen): StepFunction {
  const { stack, plan, o, progress } = t;
  return async (rate, index, phase) => {
    if (t.signal.aborted) return null;
    // a progress display per step: each is one planned run
    const reporter = new Progress(progress.mode, undefined, undefined, {
      verbose: progress.verbose,
    }).measuredFrom(runs.overhead, "leave-out");
    const done = await driveItems(
      [{ stack, plan: stepPlan(plan, rate, index), group: `step ${index} ${phase} ${rate}/s` }],
      {
        resultsRoot: o.resultsRoot,
        invocation: t.invocation,
        projectRoot: o.projectRoot,
        reporter,
        deployed: o.deployed,
        lockWaitMs: o.lockWaitMs,
        signal: t.signal,
        command: "capacity",
      },
    );
    const record = done.records[0];
    runs.overhead = reporter.overheadMeasured;
    if (done.interrupted || !record) return null;
    seen.first ??= record;
    seen.last = record;
    let series: SeriesPoint[] = [];
    try {
      series = await loadSeries(runDir(o.resultsRoot, stack.name, record.scenario, record.runId));
    } catch {
      // a run that errored before its first sample has no series: judged by its record (an error)
    }
    return judgeStep(record, series, stepOffer(plan, rate, t.entries), t.bounds);
  };
}

/** The search's result file on one stack (results/<stack>/<scenario>.capacity/…, ../results/capacity.ts). */
function capacityFile(
  scenarioFile: string,
  plan: CellPlan,
  stack: StackSpec,
  invocation: string,
  entries: number,
  bounds: CapacityBounds,
  search: SearchOptions,
  f: RunRecord | null,
  result: CapacityResult,
): CapacityFile {
  return {
    stack: stack.name,
    scenario: plan.scenario,
    scenarioFile: displayPath(scenarioFile),
    cell: plan.cell,
    invocation,
    createdAt: new Date().toISOString(),
    generator: plan.generator.name,
    entries,
    stepWarmupMs: plan.warmupMs,
    stepDurationMs: plan.durationMs,
    bounds,
    search,
    machine: f
      ? { cpuModel: f.environment.cpuModel, cores: f.environment.cores, kernel: f.environment.kernel }
      : null,
    result,
  };
}
