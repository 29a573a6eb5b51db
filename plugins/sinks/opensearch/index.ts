/**
 * The OpenSearch sink (core/plugin.ts SinkPlugin): OpenSearch 2.x on the container platforms only (no local
 * component), written into with the es-bulk generator's `_bulk` requests, which OpenSearch takes as Elasticsearch
 * does. Its scenario block (./schema.ts), image (./image.ts) and verifier (./verifier.ts, the Elasticsearch
 * verifier with OpenSearch's differences) live here.
 */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { opensearchImage } from "./image.ts";
import { OPENSEARCH_VERSION, opensearchSinkSchema, type OpensearchSinkConfig } from "./schema.ts";
import { opensearchVerifier } from "./verifier.ts";

export const plugin: SinkPlugin<OpensearchSinkConfig> = {
  kind: "sink",
  name: "opensearch",
  about: `OpenSearch ${OPENSEARCH_VERSION} (opensearchproject/opensearch), one node, security plugin off; fed by es-bulk (_bulk NDJSON)`,
  evidence: { level: "vectors" },
  schema: opensearchSinkSchema,
  image: opensearchImage,
  verifier: opensearchVerifier,
  // connection params the verifier reads on the container platforms (defaults: ./schema.ts)
  params: ["version", "index", "number_of_shards", "refresh_interval"],
};
