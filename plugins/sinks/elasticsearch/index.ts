/** The elasticsearch sink plugin: Elasticsearch, on the container platforms only. */
import type { SinkPlugin } from "../../../core/plugin.ts";
import { image } from "./image.ts";
import { elasticsearchSinkSchema, type ElasticsearchSinkConfig } from "./schema.ts";
import { elasticsearchVerifier } from "./verifier.ts";

export const plugin = {
  kind: "sink",
  name: "elasticsearch",
  about: "Elasticsearch 8.15.3, single node, security off (docker and azure only)",
  evidence: { level: "vectors" },
  schema: elasticsearchSinkSchema,
  image,
  verifier: elasticsearchVerifier,
  // connection params the renderers and the verifier read (default: the verifier's): index ("ib_events")
  params: ["index", "shards"],
} satisfies SinkPlugin<ElasticsearchSinkConfig>;
