/** Runs one real benchmark cell in-process, as `ingestbench bench` would, into a temporary results directory. */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadStack } from "../../infra/stack/schema.ts";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import { BenchRun, type CellPlan } from "../../harness/runner/run.ts";

export const projectRoot = path.resolve(import.meta.dirname, "../..");

export function quickstartPlan(overrides: { warmup?: string; duration?: string; sinkVersion?: string; drainTimeoutMs?: number } = {}): CellPlan {
  const file = path.join(projectRoot, "scenarios/quickstart.yaml");
  const plan = planCells(loadScenarioFile(file), file, { warmup: overrides.warmup, duration: overrides.duration, replicates: 1 })[0]!;
  if (overrides.drainTimeoutMs !== undefined) plan.drainTimeoutMs = overrides.drainTimeoutMs;
  if (overrides.sinkVersion) plan.sink = { ...plan.sink, config: { ...plan.sink.config, version: overrides.sinkVersion } };
  return plan;
}

export function newBenchRun(stackName: string, plan: CellPlan, signal?: AbortSignal): BenchRun {
  const resultsRoot = mkdtempSync(path.join(os.tmpdir(), "ibtest-results-"));
  return new BenchRun({
    stack: loadStack(stackName, path.join(projectRoot, "stacks")),
    plan, resultsRoot, invocation: new Date().toISOString(), signal, projectRoot,
  });
}
