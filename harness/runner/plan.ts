/**
 * From a scenario file to the list of runs to make: one CellPlan per matrix cell and replicate.
 * Plugin config schemas come from the registries (generators, sink components), so a scenario is validated once,
 * at the edge, against exactly the plugins that will run it.
 */
import { components } from "../../infra/components/index.ts";
import { parseDuration } from "../../infra/stack/units.ts";
import { ConfigurationError } from "../errors.ts";
import { generators } from "../generators/index.ts";
import { loadScenario, type PluginSchemaEntry, type Scenario } from "../scenario/schema.ts";
import type { CellPlan } from "./run.ts";

/** Load and validate a scenario against the registered plugins. @throws ConfigurationError naming file, line and field */
export function loadScenarioFile(file: string): Scenario {
  const sinks: Record<string, PluginSchemaEntry> = {};
  const collectors: Record<string, PluginSchemaEntry> = {};
  for (const c of Object.values(components)) (c.kind === "sink" ? sinks : collectors)[c.name] = c.schema;
  return loadScenario(file, { generators, sinks, collectors });
}

export interface PlanOverrides {
  replicates?: number;
  /** duration strings as on the command line, e.g. "10s" */
  duration?: string;
  warmup?: string;
}

function overrideMs(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  try {
    return parseDuration(value);
  } catch (e) {
    throw new ConfigurationError("E_FLAG", `--${flag} ${value}: ${(e as Error).message}`, { field: flag });
  }
}

/** Expand cells × replicates, in cell order with replicates innermost. */
export function planCells(scenario: Scenario, file: string, overrides: PlanOverrides = {}): CellPlan[] {
  const replicates = overrides.replicates ?? scenario.replicates;
  if (!Number.isInteger(replicates) || replicates < 1) {
    throw new ConfigurationError("E_FLAG", `--replicates must be a positive integer, got ${overrides.replicates}`, { field: "replicates" });
  }
  if (scenario.collector) {
    throw new ConfigurationError("E_COLLECTOR", `${file}: collector "${scenario.collector.name}" cannot run on the local platform yet; use collector: none`, { field: "collector" });
  }
  const plans: CellPlan[] = [];
  for (const cell of scenario.cells) {
    const s = cell.scenario;
    for (let r = 1; r <= replicates; r++) {
      const genConfig = s.generator.config as Record<string, unknown>;
      plans.push({
        scenario: s.name, scenarioFile: file, cell: cell.id, replicate: r,
        fields: s.event, replayFile: s.source?.file,
        generator: { name: s.generator.name, config: genConfig },
        sink: { name: s.sink.name, config: s.sink.config as Record<string, unknown> },
        warmupMs: overrideMs("warmup", overrides.warmup, s.warmup.ms),
        durationMs: overrideMs("duration", overrides.duration, s.duration.ms),
        intervalMs: s.interval.ms,
        drainTimeoutMs: s.drain.timeout.ms,
        checks: s.checks,
        seed: typeof genConfig.seed === "number" ? genConfig.seed : null,
        scenarioConfig: { ...s, cell: cell.values },
      });
    }
  }
  return plans;
}
