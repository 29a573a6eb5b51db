/**
 * Generator "loki-push": Grafana Loki's push API (Loki docs, "Loki HTTP API" → `POST /loki/api/v1/push`), one JSON
 * body per batch — one stream labeled job="ingestbench", gen="<genId>" (+ `labels`), each entry
 * `["<unix ns>", "<event as a JSON line>"]` (encoder ../events/loki-push.ts) — over undici (./http.ts).
 * Multi-tenant Loki takes the tenant from the `X-Scope-OrgID` header (`tenant`, or the sink's params.tenant).
 *
 * Answers: 204 No Content accepts the whole batch; any other status (400 "entry too far behind" or "line too long",
 * 429 ingestion rate limit, 5xx) rejects the whole batch with Loki's plain-text reason, never resent (the
 * connection stays open). Loki has no per-entry status: a push is all or nothing.
 */
import { z } from "zod";
import type { StampedBatch } from "../../core/events/encoding.ts";
import {
  LOKI_MAX_BATCH,
  LokiPushEncoder,
  LokiPushError,
  parseLokiPushResponse,
} from "../../core/events/loki-push.ts";
import { type HttpBatchRequest, httpLoopFields, httpSourceGenerator, refusalAnswer } from "./http.ts";
import type { GeneratorFactory } from "./types.ts";

/** Scenario block `generator.loki-push`. */
export const lokiPushSchema = z
  .object({
    ...httpLoopFields,
    batch: httpLoopFields.batch.max(LOKI_MAX_BATCH).default(1000),
    /** extra stream labels (job and gen are always set); names per the Prometheus data model */
    labels: z
      .record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "a label name [a-zA-Z_][a-zA-Z0-9_]*"), z.string())
      .default({}),
    /** entry timestamps: the send time (Loki refuses old samples) or the event's first timestamp field */
    timestamp: z.enum(["sent", "event"]).default("sent"),
    /** X-Scope-OrgID of a multi-tenant Loki; default the sink's params.tenant, else none */
    tenant: z.string().min(1).optional(),
    /** request path; default the sink's params.lokiPushPath (VictoriaLogs' /insert/loki/api/v1/push?…), else Loki's */
    path: z.string().startsWith("/").optional(),
    /** per-request timeout, milliseconds */
    timeoutMs: z.number().int().positive().default(60_000),
  })
  .strict();

export type LokiPushConfig = z.infer<typeof lokiPushSchema>;

/** The push request of one batch: a refused push (LokiPushError) rejects the batch and keeps the connection. */
function pushRequest(config: LokiPushConfig, params: Record<string, string>): HttpBatchRequest<StampedBatch> {
  const tenant = config.tenant ?? params.tenant;
  const path = config.path ?? params.lokiPushPath ?? "/loki/api/v1/push";
  return {
    label: `POST ${path.split("?")[0]}`,
    method: "POST",
    path,
    headers: { "Content-Type": "application/json", ...(tenant ? { "X-Scope-OrgID": tenant } : {}) },
    answer: refusalAnswer(
      (r, b) => {
        parseLokiPushResponse(r.status, r.body);
        return { accepted: b.count };
      },
      (err) =>
        err instanceof LokiPushError
          ? `${err.message}${err.retryable ? " (retryable, not resent)" : ""}`
          : undefined,
    ),
  };
}

/** Factory "loki-push": ctx.target host and port of Loki's HTTP API (distributor); params.tenant, params.lokiPushPath. */
export const lokiPush: GeneratorFactory<LokiPushConfig> = {
  name: "loki-push",
  schema: lokiPushSchema,
  create: (config, ctx) =>
    httpSourceGenerator(
      config,
      ctx,
      (source) => new LokiPushEncoder(source, { labels: config.labels, timestamp: config.timestamp }),
      (params) => pushRequest(config, params),
    ),
};
