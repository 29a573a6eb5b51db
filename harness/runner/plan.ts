/**
 * From a scenario file to the list of runs to make: one CellPlan per matrix cell and replicate.
 * Plugin config schemas come from the registries (generators, sink components), so a scenario is validated once,
 * at the edge, against exactly the plugins that will run it.
 */
import { components } from "../../infra/components/index.ts";
import { parseDuration } from "../../infra/stack/units.ts";
import { existsSync } from "node:fs";
import { ConfigurationError } from "../errors.ts";
import { CHECKABLE_PATHS } from "./checks.ts";
import { mulberry32 } from "../events/source.ts";
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

/**
 * Seeded cell order per replicate: for replicate r = 1..R, a Fisher–Yates permutation (Knuth, TAOCP vol. 2,
 * Algorithm P) of the cell indices 0..cellCount−1, drawn from one Mulberry32 stream seeded with `seed`, so that
 * drift over the invocation (warming disks, neighbours, thermal) spreads over all cells instead of hitting the last.
 * Deterministic for a seed. Returns R arrays of cell indices, each a permutation.
 */
export function cellOrder(cellCount: number, replicates: number, seed: number): number[][] {
  const next = mulberry32(seed);
  const orders: number[][] = [];
  for (let r = 0; r < replicates; r++) {
    const order = Array.from({ length: cellCount }, (_, i) => i);
    for (let i = cellCount - 1; i > 0; i--) {
      const j = Math.floor((next() * (i + 1)) / 4294967296);
      const t = order[i]!;
      order[i] = order[j]!;
      order[j] = t;
    }
    orders.push(order);
  }
  return orders;
}

/** The seed of the cell shuffle: the scenario's generator `seed` when it is an integer, else 1. */
export function planSeed(scenario: Scenario): number {
  const seed = (scenario.generator.config as Record<string, unknown>).seed;
  return typeof seed === "number" && Number.isInteger(seed) ? seed : 1;
}

/**
 * Expand cells × replicates: for replicate r = 1..R, every cell once, in a seeded shuffled order (`cellOrder`,
 * seeded by `planSeed`). Cell ids are the scenario's (stable across runs); only the order changes.
 * @throws ConfigurationError for a bad --replicates, --duration or --warmup, or a collector that does not receive the
 *   generator's protocol or cannot write into the sink
 */
export function planCells(scenario: Scenario, file: string, overrides: PlanOverrides = {}): CellPlan[] {
  const replicates = overrides.replicates ?? scenario.replicates;
  if (!Number.isInteger(replicates) || replicates < 1) {
    throw new ConfigurationError("E_FLAG", `--replicates must be a positive integer, got ${overrides.replicates}`, { field: "replicates" });
  }
  scenario.checks.forEach((c, i) => {
    if (!CHECKABLE_PATHS.has(c.path)) {
      throw new ConfigurationError("E_CHECK_PATH", `${file}: checks[${i}]: "${c.path}" is not a number in the run result; use one of ${[...CHECKABLE_PATHS].join(", ")}`, { field: `checks.${i}` });
    }
  });
  if (scenario.source && !existsSync(scenario.source.file)) {
    throw new ConfigurationError("E_REPLAY", `${file}: source.file: ${scenario.source.file} does not exist`, { field: "source.file" });
  }
  if (scenario.collector) {
    // the pairing is checked here, before anything is provisioned: the collector must receive the generator's
    // protocol and be able to write into the sink
    const c = components[scenario.collector.name];
    const cname = scenario.collector.name;
    if (!c || c.kind !== "collector") {
      throw new ConfigurationError("E_COLLECTOR", `${file}: collector "${cname}" is not in the component catalog`, { field: "collector" });
    }
    if (c.accepts && !c.accepts.includes(scenario.generator.name)) {
      throw new ConfigurationError("E_COLLECTOR", `${file}: collector "${cname}" receives ${c.accepts.join(", ")}, not the "${scenario.generator.name}" generator`, { field: "generator" });
    }
    if (c.writesTo && !c.writesTo.includes(scenario.sink.name)) {
      throw new ConfigurationError("E_COLLECTOR", `${file}: collector "${cname}" writes into ${c.writesTo.join(", ")}, not into sink "${scenario.sink.name}"`, { field: "sink" });
    }
  }
  const plans: CellPlan[] = [];
  const orders = cellOrder(scenario.cells.length, replicates, planSeed(scenario));
  for (let r = 1; r <= replicates; r++) {
    for (const index of orders[r - 1]!) {
      const cell = scenario.cells[index]!;
      const s = cell.scenario;
      const genConfig = s.generator.config as Record<string, unknown>;
      plans.push({
        scenario: s.name, scenarioFile: file, cell: cell.id, replicate: r,
        fields: s.event, replayFile: s.source?.file,
        generator: { name: s.generator.name, config: genConfig },
        sink: { name: s.sink.name, config: s.sink.config as Record<string, unknown> },
        collector: s.collector ? { name: s.collector.name, config: s.collector.config as Record<string, unknown> } : null,
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
