/**
 * `ingestbench aa --stack S SCENARIO`: an A/A invocation measures the noise floor of a stack and scenario. Every
 * planned run (cells × replicates, in the seeded shuffled order of runner/plan.ts) is made twice, once for group A
 * and once for group B, back to back, the group that goes first drawn per pair from the same seed (so neither group
 * is systematically first after a cold start). Both groups are the same stack, scenario and cell, so any difference
 * between them is noise: group B is compared with group A per cell with the statistics of every other comparison
 * (`compareRuns`: ratio of medians, 90 % percentile bootstrap interval, at least 3 runs per group for a verdict), and
 * the noise floor per cell, max(interval half-width, |ratio − 1|), is stored in
 * results/<stack>/<scenario>.aa/noise-floor.json, where `compare` and `nightly` pick it up.
 *
 * The runs themselves are stored under results/<stack>/<scenario>.aa/ (invocations "<iso>/A" and "<iso>/B"), apart
 * from the scenario's own results, so an A/A invocation never counts as a night or as a stack's latest bench.
 */
import path from "node:path";
import type { StackSpec } from "../../core/limits.ts";
import { loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { mulberry32 } from "../../core/events/source.ts";
import { displayPath } from "../../core/yaml.ts";
import {
  AA_SUFFIX,
  compareRuns,
  writeNoiseFloors,
  type NoiseFloorFile,
  type RunsComparison,
} from "../results/compare.ts";
import { checkResultsDir } from "../results/preflight.ts";
import { driveItems, lockWaitMs, runsExitCode, type RunItem } from "../runner/drive.ts";
import { pulumiStacks } from "../provision/deployed.ts";
import { loadScenarioFile, planCells, planSeed } from "../runner/plan.ts";
import { Progress, type ProgressMode } from "../runner/progress.ts";
import type { CellPlan } from "../runner/cell-plan.ts";
import { DEFAULT_CONFIDENCE } from "../stats/bootstrap.ts";
import { noiseFloorOf } from "../stats/compare.ts";
import { renderNoiseFloor } from "../../ui/noise-floor.ts";

export interface AaFlags {
  /** exactly one stack name */
  stack: string;
  results: string;
  replicates?: number;
  duration?: string;
  warmup?: string;
  progress?: ProgressMode;
  quiet?: boolean;
  verbose?: boolean;
  stacksDir?: string;
  force?: boolean;
  /** --lock-wait: how long to wait for the stack when another run holds it (a duration) */
  lockWait?: string;
}

/** The two invocations of an A/A invocation started at `iso`. */
export const aaInvocations = (iso: string): { a: string; b: string } => ({ a: `${iso}/A`, b: `${iso}/B` });

/**
 * The runs of an A/A invocation: each plan twice (groups A and B), back to back, in the plans' (seeded, shuffled)
 * order; which group goes first is drawn per pair from a Mulberry32 stream seeded with `seed`. Plans are copied
 * with scenario "<scenario>.aa" so that their results land apart from the scenario's own.
 */
export function aaItems(stack: StackSpec, plans: CellPlan[], seed: number, iso: string): RunItem[] {
  const next = mulberry32(seed ^ 0x5a5a);
  const inv = aaInvocations(iso);
  const items: RunItem[] = [];
  for (const p of plans) {
    const plan = { ...p, scenario: `${p.scenario}${AA_SUFFIX}` };
    const a: RunItem = { stack, plan, invocation: inv.a, group: "A" };
    const b: RunItem = { stack, plan, invocation: inv.b, group: "B" };
    items.push(...(next() % 2 === 0 ? [a, b] : [b, a]));
  }
  return items;
}

/** The noise-floor file of an A/A comparison (baseline = group A, contender = group B). */
export function noiseFloorFile(c: RunsComparison, scenario: string, createdAt: string): NoiseFloorFile {
  return {
    stack: c.stack,
    scenario,
    invocation: c.baseline.invocations[0] ?? c.baseline.label,
    createdAt,
    confidence:
      c.cells.flatMap((x) => x.contenders).find((k) => k.comparison)?.comparison?.confidence ??
      DEFAULT_CONFIDENCE,
    cells: c.cells.map((cell) => {
      const k = cell.contenders[0]!;
      const cmp = k.comparison;
      const floor = cmp ? noiseFloorOf(cmp) : Number.NaN;
      return {
        cell: cell.cell,
        floor: Number.isFinite(floor) ? floor : null,
        ratio: cmp?.ratio ?? Number.NaN,
        ci: cmp?.ci ?? null,
        halfWidth: cmp?.ci ? (cmp.ci[1] - cmp.ci[0]) / 2 : null,
        n: { a: cell.baseline.measured, b: k.measured },
        inconclusive: cmp?.inconclusive ?? true,
        reason: k.reason ?? "",
      };
    }),
  };
}

/**
 * Run the A/A invocation, compare B with A per cell, store and print the noise floor. Returns the exit code: the
 * runs' own when they failed or were interrupted (nothing is stored then), 2 when the groups could not be compared,
 * else 0.
 * @throws ConfigurationError for a bad stack, scenario or flag
 */
export async function aaCommand(scenarioFile: string, flags: AaFlags, projectRoot: string): Promise<number> {
  const names = flags.stack
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length !== 1)
    throw new ConfigurationError(
      "E_FLAG",
      `aa measures one stack's noise: give exactly one name in --stack, got ${names.length}`,
      { field: "stack" },
    );
  const resultsRoot = checkResultsDir(flags.results);
  const stack = loadStack(names[0]!, flags.stacksDir ?? path.join(projectRoot, "stacks"));
  const scenario = loadScenarioFile(scenarioFile);
  const plans = planCells(scenario, scenarioFile, {
    replicates: flags.replicates,
    duration: flags.duration,
    warmup: flags.warmup,
  });
  const iso = new Date().toISOString();
  const progress = new Progress(flags.quiet ? "quiet" : flags.progress, undefined, undefined, {
    verbose: flags.verbose,
  });
  const result = await driveItems(aaItems(stack, plans, planSeed(scenario), iso), {
    resultsRoot,
    invocation: iso,
    projectRoot,
    reporter: progress,
    deployed: pulumiStacks({ projectRoot, quiet: progress.mode === "quiet" }),
    lockWaitMs: lockWaitMs(flags.lockWait),
  });
  const code = runsExitCode(result);
  if (result.interrupted || result.records.every((r) => r.summary === null)) return code || 3;
  const inv = aaInvocations(iso);
  const comparison = await compareRuns(
    resultsRoot,
    `${scenario.name}${AA_SUFFIX}`,
    stack.name,
    { baseline: inv.a, contenders: [inv.b] },
    { force: flags.force, noiseFloors: false },
  );
  const file = noiseFloorFile(comparison, scenario.name, new Date().toISOString());
  const where = await writeNoiseFloors(resultsRoot, file);
  progress.result(`\n${renderNoiseFloor(file, displayPath(where))}`);
  progress.event("noise-floor", { file: where, ...file });
  return code;
}
