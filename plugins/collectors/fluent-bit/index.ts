/** The fluent-bit collector plugin: an installed Fluent Bit on the local platform (./component.ts), the image on docker and azure. */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims, fluentBitPressure } from "./claims.ts";
import { fluentBit } from "./component.ts";
import { image } from "./image.ts";
import { fluentBitRenderer, fluentBitSchema, type FluentBitConfig } from "./render.ts";

export const plugin = {
  kind: "collector",
  name: "fluent-bit",
  about:
    "Fluent Bit: the installed fluent-bit locally (bring your own: README.md; 4.2.8 run here), fluent/fluent-bit:4.0.3-debug (the -debug tag, for its shell) on docker and azure",
  evidence: { level: "run-once", version: "4.2.8", machine: "Intel Xeon (2 cores)", date: "2026-12-07" },
  schema: fluentBitSchema,
  local: fluentBit,
  image,
  render: fluentBitRenderer,
  claims,
  pressure: fluentBitPressure,
} satisfies CollectorPlugin<FluentBitConfig>;
