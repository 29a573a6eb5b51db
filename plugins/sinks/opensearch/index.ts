/**
 * The OpenSearch sink (core/plugin.ts SinkPlugin): OpenSearch 2.19.6, locally from the project's own build of its
 * Maven Central modules or an installed `opensearch` (./component.ts), and on the container platforms from its
 * image (./image.ts); written into with the es-bulk generator's `_bulk` requests, which OpenSearch takes as Elasticsearch
 * does. Its scenario block (./schema.ts), image (./image.ts) and verifier (./verifier.ts, the Elasticsearch
 * verifier with OpenSearch's differences) live here.
 */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { opensearch } from "./component.ts";
import { opensearchImage } from "./image.ts";
import { OPENSEARCH_VERSION, opensearchSinkSchema, type OpensearchSinkConfig } from "./schema.ts";
import { opensearchVerifier } from "./verifier.ts";

export const plugin: SinkPlugin<OpensearchSinkConfig> = {
  kind: "sink",
  name: "opensearch",
  about: `OpenSearch ${OPENSEARCH_VERSION}, one node, security off: locally the project's build of its Maven Central modules (scripts/build-opensearch.sh) or an installed opensearch, opensearchproject/opensearch on docker and azure; fed by es-bulk (_bulk NDJSON)`,
  evidence: { level: "real-ci", version: "2.19.6" },
  schema: opensearchSinkSchema,
  local: opensearch,
  image: opensearchImage,
  verifier: opensearchVerifier,
  // connection params the verifier reads on the container platforms (defaults: ./schema.ts)
  params: ["version", "index", "number_of_shards", "refresh_interval"],
  // measured with the local component (docs/measurements.md, "OpenSearch 2.19.6 on the local platform")
  minMemory: {
    bytes: 384 * 2 ** 20,
    why: "with the smallest heap it is given (256 MiB, core/catalog.ts heapMiB) the node's cgroup used 338-355 MB right after start; capped at 384 MiB it started and was OOM-killed by its second or third 8000-document bulk, at 512 MiB three bulks peaked at 436 MB",
  },
};
