/** The griddb sink plugin: GridDB behind its Web API, on the container platforms only. */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { image } from "./image.ts";
import { griddbSinkSchema, type GriddbSinkConfig } from "./schema.ts";
import { griddbVerifier } from "./verifier.ts";

export const plugin = {
  kind: "sink",
  name: "griddb",
  about:
    "GridDB 5.6.0 behind the GridDB Web API 5.6.0 (an image built from images/griddb-webapi; docker and azure only)",
  evidence: { level: "vectors" },
  schema: griddbSinkSchema,
  image,
  verifier: griddbVerifier,
  // connection params the renderers and the verifier read (default: the verifier's): cluster ("myCluster"), database
  // ("public"), container ("ib_events"); user ("admin") is the verifier's default; the password has none
  // (INGESTBENCH_GRIDDB_PASSWORD, Pulumi config secret ingestbench:griddbPassword: core/secrets.ts)
  params: ["cluster", "database", "container"],
} satisfies SinkPlugin<GriddbSinkConfig>;
