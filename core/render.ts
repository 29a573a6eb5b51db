/**
 * Shapes shared by the collector config renderers (plugins/collectors/<name>/render.ts): a renderer is a pure
 * function from the scenario's collector block (validated by the collector plugin's zod schema, in the collector's
 * own setting names) plus the downstream sink and the event fields to the text of the collector's config file.
 * The docker platform uploads that text into the collector's container (infra/docker/host.ts); the azure
 * platform's cloud-init writes the same text.
 */
import type { EventField } from "./events/types.ts";

/**
 * Where the collector writes: the sink's catalog name, its data endpoint on the stack network, and its
 * connection params: the keys its plugin names (SinkPlugin `params`, core/plugin.ts), each listed with the default
 * the verifier uses in the sink's index.ts (e.g. plugins/sinks/griddb/index.ts).
 */
export interface SinkEndpoint {
  /** the sink plugin's name (plugins/registry.ts `SinkName`; a plain string here, since core/ imports no plugin) */
  name: string;
  /** address or host name on the stack network */
  host: string;
  port: number;
  params: Record<string, string>;
}

/** Input of every renderer. */
export interface RenderInput<C> {
  /** the collector block after its schema's parse (defaults filled) */
  config: C;
  sink: SinkEndpoint;
  /** the scenario's event fields, in order (gen, seq, sent_at follow them in every row) */
  fields: readonly EventField[];
  /**
   * first generator id of this collector host, for collectors that generate load themselves (Fluentd's sample
   * input): two collector hosts must not produce the same (gen, seq) pairs. Default 0.
   */
  genBase?: number;
  /**
   * render the collector idle: its built-in generator (core/plugin.ts SelfLoad) left out, everything else as
   * configured. The deploy-time config of a `generator: none` cell on a container platform: the run uploads the
   * config with the generator, stamped with that run's generator ids, and restarts the collector
   * (harness/remote/site.ts), so no event is made before the run and none carries another run's gen. Default false.
   */
  idle?: boolean;
}

/** A rendered config file: where the collector's image reads it, and its text. */
export interface RenderedConfig {
  /** absolute path inside the container */
  file: string;
  text: string;
  /** container command (after the image's entrypoint) that makes the collector read `file`, when the image's default does not */
  command?: string[];
  /** collector-side ports the config listens on (data and metrics), for the catalog cross-check; no metrics: the collector serves none over HTTP (syslog-ng) */
  listens: {
    data: number;
    metrics?: number;
    /** every port the metrics endpoint is served on when it is more than `metrics` (Fluentd: one per worker) */
    metricsPorts?: number[];
  };
}

/**
 * A collector renderer: the sinks it can write into and the render function. Its config is the output of the
 * collector plugin's one scenario schema (core/plugin.ts `schema`), which infra/render/index.ts renderCollector parses.
 */
export interface CollectorRenderer<C = any> {
  /** sink plugin names this renderer can write into (test/architecture/imports.test.ts checks they are registered) */
  writesTo: readonly string[];
  /**
   * the harness generators (harness/generators/ names) whose protocol the configured input receives; [] when the
   * input makes its own load (Fluentd's sample) or takes a protocol no generator speaks
   */
  accepts(config: C): readonly string[];
  /** @throws ConfigurationError naming the field when the combination cannot be rendered */
  render(input: RenderInput<C>): RenderedConfig;
  /** how many generator ids (gen) this collector uses when it makes load itself (Fluentd's sample input: one per worker); absent = 0 */
  generators?(config: C): number;
}

/** `params[key]`, else `fallback`. */
export function param(sink: SinkEndpoint, key: string, fallback: string): string {
  const v = sink.params[key];
  return v === undefined || v === "" ? fallback : v;
}

/**
 * `o` without its undefined members, and without the objects left empty by that, recursively: rendered YAML
 * configs then show only what the scenario asked for or the collector requires (the collectors' render.ts files).
 */
export function compact(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const c = compact(v as Record<string, unknown>);
      if (Object.keys(c).length > 0) out[k] = c;
    } else out[k] = v;
  }
  return out;
}
