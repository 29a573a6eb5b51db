/** The loki sink plugin: Grafana Loki's push API, on the container platforms only. */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { image } from "./image.ts";
import { lokiSinkSchema, type LokiSinkConfig } from "./schema.ts";
import { lokiVerifier } from "./verifier.ts";

export const plugin = {
  kind: "sink",
  name: "loki",
  about: "Grafana Loki 3.5.0, push API (docker and azure only)",
  evidence: { level: "vectors" },
  schema: lokiSinkSchema,
  image,
  verifier: lokiVerifier,
  // connection params the renderers and the verifier read (default: the verifier's): the job label ("ingestbench")
  params: ["job"],
} satisfies SinkPlugin<LokiSinkConfig>;
