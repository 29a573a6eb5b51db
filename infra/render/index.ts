/**
 * Collector config renderers by catalog name, and the one entry the container platforms call:
 * renderCollector(name, block, sink, fields) validates the scenario's collector block with the collector's own
 * schema (errors name the field) and returns the config file's path and text.
 *
 * Scenario validation (harness/runner/plan.ts loadScenarioFile, used by `ingestbench validate` and the runner)
 * registers `collectorRenderers[name].schema` beside the local components' collectors and `containerSinkSchemas`
 * beside their sinks; its pairing check uses each renderer's `accepts(config)` and `writesTo`. A local stack
 * refuses these components when it runs (harness/runner/local-site.ts).
 */
import { ConfigurationError } from "../../core/errors.ts";
import type { EventField } from "../../core/events/types.ts";
import { fluentBit } from "./fluent-bit.ts";
import { fluentd } from "./fluentd.ts";
import { syslogNg } from "./syslog-ng.ts";
import type { CollectorRenderer, RenderedConfig, SinkEndpoint } from "../../core/render.ts";
import { vector } from "./vector.ts";

export { containerSinkSchemas } from "./sinks.ts";
export type { CollectorRenderer, RenderedConfig, RenderInput, SinkEndpoint, SinkName } from "../../core/render.ts";

/** Renderers by collector name (the catalog's names). */
export const collectorRenderers: Readonly<Record<string, CollectorRenderer>> = Object.freeze({
  [fluentd.name]: fluentd,
  [fluentBit.name]: fluentBit,
  [vector.name]: vector,
  [syslogNg.name]: syslogNg,
});

/**
 * Validate `block` (the scenario's `collector.<name>` value, raw) and render the collector's config.
 * @throws ConfigurationError E_COLLECTOR_CONFIG naming `collector.<name>.<field>` for an invalid block,
 *         E_COLLECTOR for a collector without a renderer, E_COLLECTOR_SINK for a sink it cannot write into
 */
export function renderCollector(name: string, block: unknown, sink: SinkEndpoint, fields: readonly EventField[], genBase = 0): RenderedConfig {
  const r = collectorRenderers[name];
  if (!r) {
    throw new ConfigurationError("E_COLLECTOR", `collector "${name}" has no config renderer; known: ${Object.keys(collectorRenderers).join(", ")}`, { field: "collector" });
  }
  const parsed = r.schema.safeParse(block ?? {});
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `collector.${name}${i.path.length > 0 ? "." + i.path.join(".") : ""}: ${i.message}`).join("; ");
    throw new ConfigurationError("E_COLLECTOR_CONFIG", why, { field: `collector.${name}` });
  }
  if (!r.writesTo.includes(sink.name)) {
    throw new ConfigurationError("E_COLLECTOR_SINK", `collector ${name} cannot write into sink "${sink.name}" (supported: ${r.writesTo.join(", ")})`, { field: "sink" });
  }
  return r.render({ config: parsed.data, sink, fields, genBase });
}
