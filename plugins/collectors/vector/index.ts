/** The vector collector plugin: Vector on the container platforms only. */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims, vectorPressure } from "./claims.ts";
import { image } from "./image.ts";
import { vectorRenderer, vectorSchema, type VectorConfig } from "./render.ts";

export const plugin = {
  kind: "collector",
  name: "vector",
  about: "Vector 0.49.0 (timberio/vector, Debian image; docker and azure only)",
  evidence: { level: "vectors" },
  schema: vectorSchema,
  image,
  render: vectorRenderer,
  claims,
  pressure: vectorPressure,
} satisfies CollectorPlugin<VectorConfig>;
