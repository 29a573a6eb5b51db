/** Runs one real benchmark cell in-process, as `ingestbench bench` would, into a temporary results directory. */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { loadStack } from "../../infra/stack/schema.ts";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import type { CellPlan } from "../../harness/runner/cell-plan.ts";
import { BenchRun, type RunOptions } from "../../harness/runner/run.ts";

export const projectRoot = path.resolve(import.meta.dirname, "../..");

/** What a test changes in a scenario's plan (undefined: as the scenario says). */
export interface ScenarioPlanOptions {
  warmup?: string;
  duration?: string;
  /** the matrix cell's id, e.g. "batch-lines=1000,workers=2"; default the first cell */
  cell?: string;
  drainTimeoutMs?: number;
  /** pin of the sink's / the collector's version (to provoke a mismatch) */
  sinkVersion?: string;
  collectorVersion?: string;
  /** merged into the generator's config, e.g. { rate: 8000 } */
  generator?: Record<string, unknown>;
}

/**
 * One replicate of one cell of scenarios/`scenario` (a file name, e.g. "quickstart.yaml"), with `o` applied.
 * @throws Error when the scenario has no cell `o.cell`
 */
export function scenarioPlan(scenario: string, o: ScenarioPlanOptions = {}): CellPlan {
  const file = path.join(projectRoot, "scenarios", scenario);
  const cells = planCells(loadScenarioFile(file), file, {
    warmup: o.warmup,
    duration: o.duration,
    replicates: 1,
  });
  const plan = o.cell === undefined ? cells[0] : cells.find((c) => c.cell === o.cell);
  if (!plan) throw new Error(`no cell ${o.cell ?? "at all"} in ${file}`);
  if (o.drainTimeoutMs !== undefined) plan.drainTimeoutMs = o.drainTimeoutMs;
  if (o.sinkVersion) plan.sink = { ...plan.sink, config: { ...plan.sink.config, version: o.sinkVersion } };
  if (o.collectorVersion)
    plan.collector = {
      ...plan.collector!,
      config: { ...plan.collector!.config, version: o.collectorVersion },
    };
  if (o.generator)
    plan.generator = { ...plan.generator, config: { ...plan.generator.config, ...o.generator } };
  return plan;
}

export function quickstartPlan(
  overrides: Pick<ScenarioPlanOptions, "warmup" | "duration" | "sinkVersion" | "drainTimeoutMs"> = {},
): CellPlan {
  return scenarioPlan("quickstart.yaml", overrides);
}

/** Results directories made by newBenchRun in this test file, removed once its tests are done. */
const resultsRoots: string[] = [];
afterAll(() => {
  for (const dir of resultsRoots.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A BenchRun on a stack file of stacks/, writing into a temporary results directory (removed after the file's tests);
 * `hooks`: the runner's test-only hooks (RunOptions.beforeLedger).
 */
export function newBenchRun(
  stackName: string,
  plan: CellPlan,
  signal?: AbortSignal,
  hooks: Pick<RunOptions, "beforeLedger"> = {},
): BenchRun {
  const resultsRoot = mkdtempSync(path.join(os.tmpdir(), "ibtest-results-"));
  resultsRoots.push(resultsRoot);
  return new BenchRun({
    stack: loadStack(stackName, path.join(projectRoot, "stacks")),
    plan,
    resultsRoot,
    invocation: new Date().toISOString(),
    signal,
    projectRoot,
    ...hooks,
  });
}
