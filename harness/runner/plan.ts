/**
 * From a scenario file to the list of runs to make: one CellPlan per matrix cell and replicate.
 * Plugin config schemas come from the registries, so a scenario is validated once, at the edge, against exactly
 * the plugins that will run it: the generators (harness/generators/) and the sink and collector plugins
 * (plugins/registry.ts), each block by its plugin's one schema. Which platform a stack can run a scenario on is
 * decided when it runs (harness/runner/local-site.ts refuses a plugin without a local component on a local stack).
 */
import { collectorPlugins, findCollector, findSink, sinkPlugins } from "../../plugins/registry.ts";
import { parseRunDuration } from "../../core/units.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { fieldLocation } from "../../core/yaml.ts";
import { CHECKABLE_PATHS } from "./checks.ts";
import { mulberry32 } from "../../core/events/source.ts";
import { generators } from "../generators/index.ts";
import {
  loadScenario,
  type PluginRegistries,
  type PluginSchemaEntry,
  type Scenario,
  type SelfLoadEntry,
} from "../scenario/schema.ts";
import type { CellPlan } from "./cell-plan.ts";
import type { AppPlan } from "./app-host.ts";

/** The scenario registries: generators, and every sink and collector plugin's one schema (plugins/registry.ts). */
export function scenarioRegistries(): PluginRegistries {
  const sinks: Record<string, PluginSchemaEntry> = Object.fromEntries(
    sinkPlugins.map((p) => [p.name, p.schema]),
  );
  const collectors: Record<string, PluginSchemaEntry> = Object.fromEntries(
    collectorPlugins.map((p) => [p.name, p.schema]),
  );
  const selfLoad: Record<string, SelfLoadEntry> = Object.fromEntries(
    collectorPlugins.flatMap((p) => (p.selfLoad ? [[p.name, p.selfLoad]] : [])),
  );
  return { generators, sinks, collectors, checkPaths: CHECKABLE_PATHS, selfLoad };
}

/** True when `name` is a sink or collector the local platform cannot run (a container platform's only). */
export function containerOnly(name: string): boolean {
  const p = findSink(name) ?? findCollector(name);
  return p !== undefined && p.local === undefined;
}

/** Load and validate a scenario against the registered plugins. @throws ConfigurationError naming file, line and field */
export function loadScenarioFile(file: string): Scenario {
  return loadScenario(file, scenarioRegistries());
}

/**
 * What a collector receives and writes into on some platform: its local component's lists and its renderer's (per
 * config), together (the platform is not known here: a pairing only one platform has is refused on the other
 * before provisioning, harness/runner/local-site.ts checkRunnableLocally for the local one).
 */
function pairingOf(
  name: string,
  config: unknown,
): { accepts?: readonly string[]; writesTo?: readonly string[] } | undefined {
  const p = findCollector(name);
  if (!p?.render) return p?.local ? { accepts: p.local.accepts, writesTo: p.local.writesTo } : undefined;
  // a sink the renderer knows but the collector's image refuses (core/catalog.ts `refuses`) is refused here too,
  // before anything is provisioned, not only when the container platform renders the pipeline
  const refuses = p.image?.refuses ?? {};
  const rendered = {
    accepts: p.render.accepts(config),
    writesTo: p.render.writesTo.filter((sink) => !Object.hasOwn(refuses, sink)),
  };
  if (!p.local) return rendered;
  const union = (a: readonly string[], b: readonly string[] | undefined): string[] => [
    ...new Set([...a, ...(b ?? [])]),
  ];
  // the renderer says per config which input the collector has (e.g. Fluentd's forward or http source), on every
  // platform; the sinks are those of either platform
  return { accepts: rendered.accepts, writesTo: union(rendered.writesTo, p.local.writesTo) };
}

/** CellPlan.generator.name of a `generator: none` cell: no generator process runs (CellPlan.selfLoad says what makes the load). */
export const NO_GENERATOR = "none";

/** What a `generator: none` cell's collector makes (CellPlan.selfLoad), from its plugin's SelfLoad. */
function selfLoadPlan(collector: { name: string; config: unknown }): NonNullable<CellPlan["selfLoad"]> {
  const e = findCollector(collector.name)!.selfLoad!;
  return {
    collector: collector.name,
    input: e.input,
    counter: e.counter,
    generatorsPerHost: e.generators(collector.config),
    quietMs: e.quietMs(collector.config),
  };
}

export interface PlanOverrides {
  replicates?: number;
  /** duration strings as on the command line, e.g. "10s" */
  duration?: string;
  /** the flag `duration` came from, for messages (default "duration"; capacity's is "step-duration") */
  durationFlag?: string;
  warmup?: string;
}

/** A command-line duration flag in ms, undefined when not given. @throws ConfigurationError E_FLAG naming the flag */
function flagMs(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseRunDuration(value);
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
  const seed = (scenario.generator?.config as Record<string, unknown> | undefined)?.seed;
  return typeof seed === "number" && Number.isInteger(seed) ? seed : 1;
}

/**
 * The cells of a scenario with an application under test: every matrix cell × every variant (the first variant the
 * baseline), id `variant=<name>` (`<matrix id>,variant=<name>` with a matrix), each with the cell's `app` and variant.
 */
function appCells(scenario: Scenario): Array<Scenario["cells"][number] & { app: AppPlan | undefined }> {
  const out: Array<Scenario["cells"][number] & { app: AppPlan | undefined }> = [];
  for (const cell of scenario.cells) {
    const app = cell.scenario.app!;
    const variants = cell.scenario.variants ?? [];
    for (const variant of variants) {
      out.push({
        ...cell,
        id: cell.id === "default" ? `variant=${variant.name}` : `${cell.id},variant=${variant.name}`,
        values: { ...cell.values, variant: variant.name },
        app: { spec: app, variant },
      });
    }
  }
  return out;
}

/**
 * What an application under test must declare to be run here: `variants` (each is a cell), a `command` (an `image`
 * needs a container platform, not built yet), and a `sent` figure in `results.map` (the ledger's sent: the seqs its
 * exporter used, dropped ones included; docs/app-under-test.md).
 * @throws ConfigurationError E_APP_NOT_RUNNABLE at the field's file:line:col
 */
function checkApp(scenario: Scenario, file: string): void {
  const app = scenario.app!;
  const refuse = (fieldPath: string[], message: string): never => {
    const where = fieldLocation(file, fieldPath, "key");
    throw new ConfigurationError("E_APP_NOT_RUNNABLE", `${where}: ${message}`, {
      field: fieldPath.join("."),
      location: where.replace(/:\d+: .*$/, ""),
    });
  };
  if (!scenario.variants)
    refuse(
      ["app"],
      'an application under test runs as variants (each a cell, the first the baseline): declare variants, e.g. [{ name: disabled, env: { EXPORT: "0" } }, { name: enabled, env: { EXPORT: "1" } }]',
    );
  if (!app.command)
    refuse(
      ["app", "image"],
      "app.image needs a container platform, which runs no application yet; give app.command (argv run on the host)",
    );
  if (app.results.map.sent === undefined)
    refuse(
      ["app", "results", "map"],
      "map the sent figure (the records the app's exporter stamped a seq on, dropped ones included): the ledger counts against it",
    );
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
    throw new ConfigurationError(
      "E_FLAG",
      `--replicates must be a positive integer, got ${overrides.replicates}`,
      { field: "replicates" },
    );
  }
  checkPairings(scenario, file);
  const { warmupFlagMs, durationFlagMs } = flagTimings(scenario, overrides);
  if (scenario.app) checkApp(scenario, file);
  const plans: CellPlan[] = [];
  // with an application under test, each variant of each matrix cell is a cell (`variant=<name>`, after the matrix's id)
  const cells = scenario.app ? appCells(scenario) : scenario.cells.map((c) => ({ ...c, app: undefined }));
  const orders = cellOrder(cells.length, replicates, planSeed(scenario));
  for (let r = 1; r <= replicates; r++) {
    for (const index of orders[r - 1]!) {
      const cell = cells[index]!;
      const s = cell.scenario;
      const genConfig = (s.generator?.config ?? {}) as Record<string, unknown>;
      // the timing this run uses, after command-line overrides
      const timing = {
        warmupMs: warmupFlagMs ?? s.warmup.ms,
        durationMs: durationFlagMs ?? s.duration.ms,
        intervalMs: s.interval.ms,
      };
      plans.push({
        scenario: s.name,
        scenarioFile: file,
        cell: cell.id,
        replicate: r,
        fields: s.event,
        replayFile: s.source?.file,
        generator: { name: s.generator?.name ?? NO_GENERATOR, config: genConfig },
        ...(s.generator === null && s.collector ? { selfLoad: selfLoadPlan(s.collector) } : {}),
        sink: { name: s.sink.name, config: s.sink.config as Record<string, unknown> },
        collector: s.collector
          ? { name: s.collector.name, config: s.collector.config as Record<string, unknown> }
          : null,
        ...timing,
        drainTimeoutMs: s.drain.timeout.ms,
        checks: s.checks,
        ...(s.fidelity ? { fidelity: s.fidelity } : {}),
        ...(s.query ? { query: s.query } : {}),
        seed: typeof genConfig.seed === "number" ? genConfig.seed : null,
        ...(s.steps.length ? { steps: s.steps } : {}),
        ...(cell.app ? { app: cell.app } : {}),
        // recorded as `run` (compare lists runs that differ in it)
        scenarioConfig: {
          ...s,
          cell: cell.values,
          run: timing,
          ...(cell.app ? { variant: cell.app.variant } : {}),
        },
      });
    }
  }
  return plans;
}

/**
 * The pairing of every cell (a matrix may vary the collector's input), before anything is provisioned: the collector
 * must receive the generator's protocol and be able to write into the sink.
 * @throws ConfigurationError E_COLLECTOR at the plugin's name under the block the pairing fails at
 */
function checkPairings(scenario: Scenario, file: string): void {
  // check paths and the replay file were checked by the scenario schema, at their lines (scenarioRegistries)
  // the pairing is checked here, before anything is provisioned, for every cell (a matrix may vary the
  // collector's input): the collector must receive the generator's protocol and be able to write into the sink
  for (const cell of scenario.cells) {
    const s = cell.scenario;
    if (!s.collector) continue;
    const cname = s.collector.name;
    const at = scenario.cells.length > 1 ? ` (cell ${cell.id})` : "";
    // "file:line:col: field: …" at the plugin's name under the block the pairing fails at
    const pairingError = (
      block: "collector" | "generator" | "sink",
      name: string,
      message: string,
    ): ConfigurationError => {
      const where = fieldLocation(file, [block, name], "key");
      return new ConfigurationError("E_COLLECTOR", `${where}: ${message}${at}`, {
        field: `${block}.${name}`,
        location: where.replace(/:\d+: .*$/, ""),
      });
    };
    const p = pairingOf(cname, s.collector.config);
    if (!p) throw pairingError("collector", cname, `collector "${cname}" is not in the component catalog`);
    // generator: none: the collector's own input makes the load (checked by the scenario schema, selfLoadIssues)
    if (s.generator && p.accepts && !p.accepts.includes(s.generator.name)) {
      const receives =
        p.accepts.length > 0
          ? `receives ${p.accepts.join(", ")}`
          : "receives from no generator as configured (its input makes its own load or speaks no generator's protocol)";
      throw pairingError(
        "generator",
        s.generator.name,
        `collector "${cname}" ${receives}, not the "${s.generator.name}" generator`,
      );
    }
    if (p.writesTo && !p.writesTo.includes(s.sink.name)) {
      const refusal = findCollector(cname)?.image?.refuses?.[s.sink.name];
      throw pairingError(
        "sink",
        s.sink.name,
        `collector "${cname}" writes into ${p.writesTo.join(", ")}, not into sink "${s.sink.name}"${refusal ? ` (${refusal})` : ""}`,
      );
    }
  }
}

/**
 * The command line's --warmup and --duration (or its `durationFlag`), ms; the duration must leave room for two
 * samples, as the file's `duration` must (interval ≤ duration).
 * @throws ConfigurationError E_FLAG
 */
function flagTimings(
  scenario: Scenario,
  overrides: PlanOverrides,
): { warmupFlagMs: number | undefined; durationFlagMs: number | undefined } {
  // the command line's --duration must leave room for two samples, as the file's `duration` must (interval ≤ duration)
  const warmupFlagMs = flagMs("warmup", overrides.warmup);
  const durationFlag = overrides.durationFlag ?? "duration";
  const durationFlagMs = flagMs(durationFlag, overrides.duration);
  if (durationFlagMs !== undefined) {
    const interval = Math.max(...scenario.cells.map((c) => c.scenario.interval.ms));
    if (!(durationFlagMs > 0) || durationFlagMs < interval) {
      throw new ConfigurationError(
        "E_FLAG",
        `--${durationFlag} ${overrides.duration}: the measured window must be at least the scenario's sampling interval (${interval} ms), so that two timed counts bracket it`,
        { field: durationFlag },
      );
    }
  }
  return { warmupFlagMs, durationFlagMs };
}
