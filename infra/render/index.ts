/**
 * The one entry the container platforms call to configure a collector: renderCollector(name, block, sink, fields)
 * validates the scenario's collector block with the collector plugin's one schema (plugins/registry.ts; errors name
 * the field) and returns the config file's path and text from the plugin's renderer
 * (plugins/collectors/<name>/render.ts).
 */
import { ConfigurationError } from "../../core/errors.ts";
import type { EventField } from "../../core/events/types.ts";
import type { CollectorPlugin } from "../../core/plugin.ts";
import type { CollectorRenderer, RenderedConfig, SinkEndpoint } from "../../core/render.ts";
import { collectorPlugins } from "../../plugins/registry.ts";

export type { CollectorRenderer, RenderedConfig, RenderInput, SinkEndpoint } from "../../core/render.ts";

/** The collectors that run on the container platforms: those with a renderer, in registry order. */
export function renderedCollectors(): Array<CollectorPlugin & { render: CollectorRenderer }> {
  return collectorPlugins.filter(
    (c): c is CollectorPlugin & { render: CollectorRenderer } => c.render !== undefined,
  );
}

/** The collector `name`'s plugin when it has a renderer, else undefined. */
export function rendererOf(name: string): (CollectorPlugin & { render: CollectorRenderer }) | undefined {
  return renderedCollectors().find((c) => c.name === name);
}

/**
 * Validate `block` (the scenario's `collector.<name>` value, raw) and render the collector's config.
 * @param genBase first generator id of this collector host (RenderInput.genBase)
 * @param opts.idle leave the collector's built-in generator out (RenderInput.idle)
 * @throws ConfigurationError E_COLLECTOR_CONFIG naming `collector.<name>.<field>` for an invalid block,
 *         E_COLLECTOR for a collector without a renderer, E_COLLECTOR_SINK for a sink it cannot write into
 */
export function renderCollector(
  name: string,
  block: unknown,
  sink: SinkEndpoint,
  fields: readonly EventField[],
  genBase = 0,
  opts: { idle?: boolean } = {},
): RenderedConfig {
  const plugin = rendererOf(name);
  if (!plugin) {
    throw new ConfigurationError(
      "E_COLLECTOR",
      `collector "${name}" has no config renderer; known: ${renderedCollectors()
        .map((c) => c.name)
        .join(", ")}`,
      { field: "collector" },
    );
  }
  const parsed = plugin.schema.safeParse(block ?? {});
  if (!parsed.success) {
    const why = parsed.error.issues
      .map((i) => `collector.${name}${i.path.length > 0 ? "." + i.path.join(".") : ""}: ${i.message}`)
      .join("; ");
    throw new ConfigurationError("E_COLLECTOR_CONFIG", why, { field: `collector.${name}` });
  }
  const r = plugin.render;
  if (!r.writesTo.includes(sink.name)) {
    throw new ConfigurationError(
      "E_COLLECTOR_SINK",
      `collector ${name} cannot write into sink "${sink.name}" (supported: ${r.writesTo.join(", ")})`,
      { field: "sink" },
    );
  }
  return r.render({ config: parsed.data, sink, fields, genBase, ...(opts.idle ? { idle: true } : {}) });
}
