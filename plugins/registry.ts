/**
 * The plugin registry: every sink and every collector, one line each, by the name scenarios use. A plugin is its
 * folder (plugins/sinks/<name>/, plugins/collectors/<name>/) whose index.ts exports one descriptor (`plugin`,
 * core/plugin.ts); adding one is that folder plus its line here (plugins/README.md). Everything else reads plugins
 * through this module: scenario validation (harness/runner/plan.ts), the local platform (harness/runner/local-site.ts),
 * the container platforms' catalog and renderers (infra/catalog.ts, infra/render/index.ts), the verifiers and
 * claims of the runner (harness/runner/run.ts, harness/remote/site.ts).
 *
 * Each line loads its folder's index.ts (a dynamic import, awaited at module load, so that the name, the folder
 * and the descriptor are one line); the object keys are the plugin names and equal each descriptor's `name`
 * (test/architecture/imports.test.ts checks, and that every folder is registered).
 *
 * The order of the lines is the order catalogs and stack errors list the plugins in.
 */
import { ConfigurationError } from "../core/errors.ts";
import type { CollectorPlugin, SinkPlugin } from "../core/plugin.ts";

/** The sinks, by name. */
export const sinks = {
  postgres: (await import("./sinks/postgres/index.ts")).plugin,
  clickhouse: (await import("./sinks/clickhouse/index.ts")).plugin,
  elasticsearch: (await import("./sinks/elasticsearch/index.ts")).plugin,
  opensearch: (await import("./sinks/opensearch/index.ts")).plugin,
  loki: (await import("./sinks/loki/index.ts")).plugin,
  griddb: (await import("./sinks/griddb/index.ts")).plugin,
  victorialogs: (await import("./sinks/victorialogs/index.ts")).plugin,
} as const satisfies Readonly<Record<string, SinkPlugin>>;

/** The collectors, by name. */
export const collectors = {
  "fluent-bit": (await import("./collectors/fluent-bit/index.ts")).plugin,
  vector: (await import("./collectors/vector/index.ts")).plugin,
  fluentd: (await import("./collectors/fluentd/index.ts")).plugin,
  "syslog-ng": (await import("./collectors/syslog-ng/index.ts")).plugin,
  rsyslog: (await import("./collectors/rsyslog/index.ts")).plugin,
  otelcol: (await import("./collectors/otelcol/index.ts")).plugin,
} as const satisfies Readonly<Record<string, CollectorPlugin>>;

/** A registered sink's name. */
export type SinkName = keyof typeof sinks;
/** A registered collector's name. */
export type CollectorName = keyof typeof collectors;

/** The registered sink names, in registry order. */
export const sinkNames = Object.keys(sinks) as SinkName[];
/** The registered collector names, in registry order. */
export const collectorNames = Object.keys(collectors) as CollectorName[];

/** True when `name` is a registered sink. */
export function isSinkName(name: string): name is SinkName {
  return Object.hasOwn(sinks, name);
}

/** True when `name` is a registered collector. */
export function isCollectorName(name: string): name is CollectorName {
  return Object.hasOwn(collectors, name);
}

/** The sink plugin `name`, or undefined when none is registered under it. */
export function findSink(name: string): SinkPlugin | undefined {
  return isSinkName(name) ? sinks[name] : undefined;
}

/** The collector plugin `name`, or undefined when none is registered under it. */
export function findCollector(name: string): CollectorPlugin | undefined {
  return isCollectorName(name) ? collectors[name] : undefined;
}

/** The sink plugin `name`. @throws ConfigurationError E_SINK listing the known sinks */
export function sinkPlugin(name: string): SinkPlugin {
  if (!isSinkName(name))
    throw new ConfigurationError("E_SINK", `unknown sink "${name}"; known sinks: ${sinkNames.join(", ")}`, {
      field: "sink",
    });
  return sinks[name];
}

/** The collector plugin `name`. @throws ConfigurationError E_COLLECTOR listing the known collectors */
export function collectorPlugin(name: string): CollectorPlugin {
  if (!isCollectorName(name)) {
    throw new ConfigurationError(
      "E_COLLECTOR",
      `unknown collector "${name}"; known collectors: ${collectorNames.join(", ")}`,
      { field: "collector" },
    );
  }
  return collectors[name];
}

/**
 * The sink or collector `name` (no sink shares a collector's name).
 * @throws ConfigurationError E_PLUGIN listing the known sinks and collectors
 */
export function pluginNamed(name: string): SinkPlugin | CollectorPlugin {
  const p = findSink(name) ?? findCollector(name);
  if (!p)
    throw new ConfigurationError(
      "E_PLUGIN",
      `no sink or collector "${name}"; sinks: ${sinkNames.join(", ")}; collectors: ${collectorNames.join(", ")}`,
    );
  return p;
}

/** The sinks as the plugin contract types them, in registry order. */
export const sinkPlugins: readonly SinkPlugin[] = Object.values(sinks);
/** The collectors as the plugin contract types them, in registry order. */
export const collectorPlugins: readonly CollectorPlugin[] = Object.values(collectors);
/** Every plugin, sinks first, in registry order. */
export const allPlugins: ReadonlyArray<SinkPlugin | CollectorPlugin> = [...sinkPlugins, ...collectorPlugins];
