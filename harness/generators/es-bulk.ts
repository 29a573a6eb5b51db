/**
 * Generator "es-bulk": Elasticsearch's Bulk API (Elasticsearch reference 8.15, "Bulk API"): one
 * `POST /<index>/_bulk?filter_path=…` per batch, NDJSON body of action + source line pairs (encoder
 * ../events/es-bulk.ts), Content-Type application/x-ndjson, HTTP over undici (./http.ts), Basic auth (RFC 7617) when
 * the sink's params carry `user` and `password` (ES 8 enables security by default).
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
import type { StampedBatch } from "../events/encoding.ts";
import { basicAuth } from "../events/griddb-webapi.ts";
import { ES_BULK_CONTENT_TYPE, EsBulkEncoder, EsBulkError, parseBulkResponse } from "../events/es-bulk.ts";
import { createEventSource, type EventSource } from "../events/source.ts";
import { httpBatchTransport, rejectAll } from "./http.ts";
import { batchLoopFields, runSourceBatchLoop } from "./loop.ts";
import type { Generator, GeneratorContext, GeneratorFactory, GeneratorFinal, GeneratorProgress } from "./types.ts";

/** Scenario block `generator.es-bulk`. */
export const esBulkSchema = z
  .object({
    ...batchLoopFields,
    batch: batchLoopFields.batch.default(1000),
    /** target index (or data stream); default the sink's params.index, else "ib_events" */
    index: z.string().min(1).max(255).regex(/^[^\s/\\*?"<>|,#:]+$/, "an Elasticsearch index name").optional(),
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

/** Basic auth header from a target's params.user / params.password, or none. */
export function authHeader(params: Record<string, string>): Record<string, string> {
  return params.user !== undefined ? { Authorization: basicAuth(params.user, params.password ?? "") } : {};
}

class EsBulkGenerator implements Generator {
  private readonly source: EventSource;
  private readonly encoder: EsBulkEncoder;

  constructor(private readonly config: EsBulkConfig, private readonly ctx: GeneratorContext) {
    this.source = createEventSource({ fields: ctx.fields, seed: config.seed, genId: ctx.genId, replayFile: ctx.replayFile });
    this.encoder = new EsBulkEncoder(this.source, { op: config.op, ids: config.ids });
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port, params } = this.ctx.target;
    const index = this.config.index ?? params.index ?? "ib_events";
    const path = `/${encodeURIComponent(index)}/_bulk?filter_path=${encodeURIComponent(BULK_FILTER_PATH)}`;
    const transport = httpBatchTransport<StampedBatch>({
      host, port, label: `POST /${index}/_bulk`, method: "POST", path, timeoutMs: this.config.timeoutMs,
      headers: { "Content-Type": ES_BULK_CONTENT_TYPE, ...authHeader(params) },
      answer: (r, b) => {
        try {
          const o = parseBulkResponse(r.status, r.body, b.from, b.count);
          return { accepted: o.accepted, rejectedSeqs: o.rejectedSeqs, errors: o.summary };
        } catch (err) {
          // a whole-request refusal keeps the connection; a malformed answer throws (batch rejected, connection replaced)
          if (err instanceof EsBulkError && err.status !== 200) return rejectAll(b, `${err.message}${err.retryable ? " (retryable, not resent)" : ""}`);
          throw err;
        }
      },
    });
    return runSourceBatchLoop(this.config, { signal, onProgress, genId: this.ctx.genId }, transport, this.source, this.encoder);
  }
}

/** Factory "es-bulk": ctx.target host and port of Elasticsearch's HTTP API; params.index, user, password. */
export const esBulk: GeneratorFactory<EsBulkConfig> = {
  name: "es-bulk",
  schema: esBulkSchema,
  create: (config, ctx) => new EsBulkGenerator(config, ctx),
};
