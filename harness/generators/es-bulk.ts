/**
 * Generator "es-bulk": Elasticsearch's Bulk API (Elasticsearch reference 8.15, "Bulk API"): one
 * `POST /<index>/_bulk?filter_path=…` per batch, NDJSON body of action + source line pairs (encoder
 * ../events/es-bulk.ts), Content-Type application/x-ndjson, HTTP over undici (./http.ts), Basic auth (RFC 7617) when
 * INGESTBENCH_ELASTICSEARCH_PASSWORD is set (user: params.user, default `elastic`; core/secrets.ts).
 *
 * Answers (parsed by ../events/es-bulk.ts `parseBulkResponse`):
 * - 200 with `"errors": false`: every item accepted.
 * - 200 with `"errors": true`: items are in request order, item i is seq from + i; an item with a non-2xx status
 *   (429 es_rejected_execution_exception, 400 mapper_parsing_exception, ...) is a rejected seq, the rest are accepted.
 *   The connection stays open.
 * - Another status for the whole request (429 circuit_breaking_exception or a full queue, 5xx, 401, 413, ...): every
 *   seq of the batch is rejected, with the reason; the connection stays open. Nothing is retried, in either case: a
 *   retry would change the offered load and blur the ledger; retrying is a collector's policy (Fluentd's and Logstash's
 *   retry of 429 items), which a scenario measures by putting that collector in front.
 * - A body that is not a bulk response, or whose item count differs from the batch: the whole batch is rejected and
 *   the connection replaced.
 * `filter_path=errors,items.*.status,items.*.error` (ES "Common options → Response filtering") keeps the answer to
 * what the mapping needs (no _index, _id, _version, result, _shards, _seq_no per item).
 *
 * `_id`: none by default, so a batch stored twice is two sets of documents and the verifier counts duplicates;
 * `ids: true` sets `_id` = "<gen>-<seq>", so a re-send overwrites (`_version` 2) and the verifier counts it as
 * overwritten instead.
 */
import { z } from "zod";
import type { StampedBatch } from "../../core/events/encoding.ts";
import {
  authHeader,
  ES_BULK_CONTENT_TYPE,
  EsBulkEncoder,
  EsBulkError,
  parseBulkResponse,
} from "../../core/events/es-bulk.ts";
import { type HttpBatchRequest, httpLoopFields, httpSourceGenerator, refusalAnswer } from "./http.ts";
import type { GeneratorFactory } from "./types.ts";

/** Scenario block `generator.es-bulk`. */
export const esBulkSchema = z
  .object({
    ...httpLoopFields,
    batch: httpLoopFields.batch.default(1000),
    /** target index (or data stream); default the sink's params.index, else "ib_events" */
    index: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^\s/\\*?"<>|,#:]+$/, "an Elasticsearch index name")
      .optional(),
    /** bulk action: "index", or "create" (the only one data streams accept) */
    op: z.enum(["index", "create"]).default("index"),
    /** set _id = "<gen>-<seq>" so re-sends overwrite instead of duplicating */
    ids: z.boolean().default(false),
    /** per-request timeout, milliseconds */
    timeoutMs: z.number().int().positive().default(60_000),
  })
  .strict();

export type EsBulkConfig = z.infer<typeof esBulkSchema>;

/** Query string of every bulk request: only the fields `parseBulkResponse` reads. */
export const BULK_FILTER_PATH = "errors,items.*.status,items.*.error";

/** The Bulk API request of one batch, and what its answer means (see the file comment). */
function bulkRequest(config: EsBulkConfig, params: Record<string, string>): HttpBatchRequest<StampedBatch> {
  const index = config.index ?? params.index ?? "ib_events";
  const filter = `filter_path=${encodeURIComponent(BULK_FILTER_PATH)}`;
  // a sink that takes the Bulk API at a path of its own (params.bulkPath) gets the index in the action lines
  const fixed = params.bulkPath;
  return {
    label: `POST ${fixed?.split("?")[0] ?? `/${index}/_bulk`}`,
    method: "POST",
    path: fixed
      ? `${fixed}${fixed.includes("?") ? "&" : "?"}${filter}`
      : `/${encodeURIComponent(index)}/_bulk?${filter}`,
    headers: { "Content-Type": ES_BULK_CONTENT_TYPE, ...authHeader("elasticsearch", params) },
    answer: refusalAnswer(
      (r, b) => {
        const o = parseBulkResponse(r.status, r.body, b.from, b.count);
        return { accepted: o.accepted, rejectedSeqs: o.rejectedSeqs, errors: o.summary };
      },
      // a whole-request refusal keeps the connection; a malformed answer throws (batch rejected, connection replaced)
      (err) =>
        err instanceof EsBulkError && err.status !== 200
          ? `${err.message}${err.retryable ? " (retryable, not resent)" : ""}`
          : undefined,
    ),
  };
}

/**
 * Factory "es-bulk": ctx.target host and port of Elasticsearch's HTTP API; params.index, user (the password from
 * INGESTBENCH_ELASTICSEARCH_PASSWORD); params.bulkPath for a server that takes the Bulk API at a fixed path of its own
 * (VictoriaLogs' `/insert/elasticsearch/_bulk?<its ingestion args>`: plugins/sinks/victorialogs/component.ts), the
 * index then in each action line.
 */
export const esBulk: GeneratorFactory<EsBulkConfig> = {
  name: "es-bulk",
  schema: esBulkSchema,
  create: (config, ctx) =>
    httpSourceGenerator(
      config,
      ctx,
      (source) =>
        new EsBulkEncoder(source, {
          op: config.op,
          ids: config.ids,
          // the index travels in the action lines where the path cannot name it
          ...(ctx.target.params.bulkPath
            ? { index: config.index ?? ctx.target.params.index ?? "ib_events" }
            : {}),
        }),
      (params) => bulkRequest(config, params),
    ),
};
