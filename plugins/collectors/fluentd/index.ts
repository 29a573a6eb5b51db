/** The fluentd collector plugin: Fluentd on the container platforms only. */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims } from "./claims.ts";
import { image } from "./image.ts";
import { fluentdRenderer, fluentdSchema, type FluentdConfig } from "./render.ts";

export const plugin = {
  kind: "collector",
  name: "fluentd",
  about: "Fluentd 1.12.0 (fluent/fluentd; with fluent-plugin-griddb built for GridDB sinks; docker and azure only)",
  schema: fluentdSchema,
  image,
  render: fluentdRenderer,
  claims,
} satisfies CollectorPlugin<FluentdConfig>;
