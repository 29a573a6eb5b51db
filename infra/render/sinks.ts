/**
 * Scenario blocks (`sink.<name>`) of the sinks that run only on the container platforms (no local component:
 * infra/components/ has postgres and clickhouse). Strict zod schemas, names as each server names them; the
 * pins are the catalog's (infra/catalog.ts). What a collector needs from them (index, container, ...) reaches
 * the renderers as SinkEndpoint params.
 */
import { z } from "zod";

/**
 * `sink.elasticsearch`: Elasticsearch 8.15.3 (004), single node, security off (catalog env). `index` and `shards`
 * are the names harness/verifiers/elasticsearch.ts reads from the sink params.
 */
export const elasticsearchSinkSchema = z
  .object({
    version: z.literal("8.15.3").default("8.15.3"),
    /** target index (004 wrote into "logs-13"); default "ib_events" */
    index: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "a lowercase Elasticsearch index name").default("ib_events"),
    /** primary shards of the index the verifier creates (no replica: single node) */
    shards: z.number().int().min(1).max(64).default(1),
  })
  .strict();

/**
 * `sink.griddb`: GridDB behind its Web API (the fluent-plugin-griddb target), with the param names
 * harness/verifiers/griddb.ts reads. `containerType` COLLECTION (no row key) as 000 chose: a TIME_SERIES container
 * upserts on its timestamp key, so equal timestamps would be overwrites, not rows.
 */
export const griddbSinkSchema = z
  .object({
    version: z.string().regex(/^\d+\.\d+(\.\d+)?$/).default("5.6.0"),
    cluster: z.string().regex(/^[A-Za-z0-9_]+$/).default("myCluster"),
    database: z.string().regex(/^[A-Za-z0-9_]+$/).default("public"),
    container: z.string().regex(/^[A-Za-z0-9_]+$/).default("ib_events"),
    containerType: z.enum(["COLLECTION", "TIME_SERIES"]).default("COLLECTION"),
  })
  .strict();

/** `sink.loki`: Grafana Loki, push API. */
export const lokiSinkSchema = z
  .object({
    version: z.string().regex(/^\d+\.\d+\.\d+$/).default("3.5.0"),
    /** the `job` stream label every line carries */
    job: z.string().regex(/^[A-Za-z0-9_-]+$/).default("ingestbench"),
  })
  .strict();

/** Sink schemas by catalog name. */
export const containerSinkSchemas = {
  elasticsearch: elasticsearchSinkSchema,
  griddb: griddbSinkSchema,
  loki: lokiSinkSchema,
} as const;
