/** The fluent-bit collector plugin: Fluent Bit on the container platforms only. */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims } from "./claims.ts";
import { image } from "./image.ts";
import { fluentBitRenderer, fluentBitSchema, type FluentBitConfig } from "./render.ts";

export const plugin = {
  kind: "collector",
  name: "fluent-bit",
  about: "Fluent Bit 4.0.3 (fluent/fluent-bit, the -debug tag for its shell; docker and azure only)",
  evidence: { level: "vectors" },
  schema: fluentBitSchema,
  image,
  render: fluentBitRenderer,
  claims,
} satisfies CollectorPlugin<FluentBitConfig>;
