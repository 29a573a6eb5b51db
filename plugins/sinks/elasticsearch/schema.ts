/** The scenario schema of the elasticsearch sink (`sink.elasticsearch`), its plugin's one schema (./index.ts). */
import { z } from "zod";

/**
 * `sink.elasticsearch`: Elasticsearch 8.15.3 (004), single node, security off (catalog env). `index` and `shards`
 * are the names ./verifier.ts reads from the sink params.
 */
export const elasticsearchSinkSchema = z
  .object({
    version: z.literal("8.15.3").default("8.15.3"),
    /** target index (004 wrote into "logs-13"); default "ib_events" */
    index: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, "a lowercase Elasticsearch index name")
      .default("ib_events"),
    /** primary shards of the index the verifier creates (no replica: single node) */
    shards: z.number().int().min(1).max(64).default(1),
  })
  .strict();

export type ElasticsearchSinkConfig = z.infer<typeof elasticsearchSinkSchema>;
