/**
 * `sink.opensearch`: the scenario block of the OpenSearch sink, in OpenSearch's own names — `index` (the target
 * index), and the index settings the verifier creates it with, `number_of_shards` and `refresh_interval`
 * (OpenSearch documentation, "Index settings": `index.number_of_shards`, `index.refresh_interval`). No replica: a
 * single-node sink would stay yellow with one (./verifier.ts). The pin is the image's (./image.ts).
 */
import { z } from "zod";

/** The OpenSearch release this sink runs: the image tag (./image.ts) and the scenario's `version`. */
export const OPENSEARCH_VERSION = "2.19.6";

/**
 * An index name OpenSearch accepts ("Create index" → "Index naming restrictions": lowercase, not starting with
 * `_`, `-` or `+`, none of `:"*+/\|?#><,` or spaces, at most 255 bytes); this is the safe subset the Elasticsearch sink
 * uses too.
 */
export const OPENSEARCH_INDEX = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * A time value `index.refresh_interval` takes ("Common options → Time units": d, h, m, s, ms, micros, nanos), or
 * "-1", which turns the periodic refresh off.
 */
export const REFRESH_INTERVAL = /^(-1|[0-9]+(d|h|m|s|ms|micros|nanos))$/;

export const opensearchSinkSchema = z
  .object({
    version: z.literal(OPENSEARCH_VERSION).default(OPENSEARCH_VERSION),
    /** target index; default "ib_events" (the es-bulk generator writes into the sink's index unless told otherwise) */
    index: z
      .string()
      .max(255)
      .regex(OPENSEARCH_INDEX, "a lowercase OpenSearch index name")
      .default("ib_events"),
    /** primary shards of the index the verifier creates (OpenSearch's limit for index.number_of_shards is 1024) */
    number_of_shards: z.number().int().min(1).max(1024).default(1),
    /**
     * how often the index refreshes by itself (new documents become searchable), e.g. "1s", "30s", "-1" (off).
     * Absent: OpenSearch's default, 1s, skipped while a shard is search-idle (`index.search.idle.after`, 30s). The
     * verifier refreshes explicitly before each count (`POST /<index>/_refresh`), so counts never wait on it; it
     * changes the indexing work (how many small segments are written, and so merged).
     */
    refresh_interval: z
      .string()
      .regex(REFRESH_INTERVAL, 'a time value such as "1s" or "30s", or "-1" (off)')
      .optional(),
  })
  .strict();

export type OpensearchSinkConfig = z.infer<typeof opensearchSinkSchema>;
