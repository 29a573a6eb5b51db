/**
 * Generator "http-json": POSTs batches of N events as one HTTP/1.1 request body (encoder: ../events/http-json.ts),
 * NDJSON (`application/x-ndjson`) or a JSON array (`application/json`), to `http://<host>:<port><path>` — the shape
 * Fluent Bit's and Vector's http inputs take (write-up 001: batch × count matrices).
 *
 * Each connection slot is one undici `Client` (./http.ts): one persistent TCP connection (RFC 9112) with `pipelining`
 * batches in flight (default 2: the next request goes out as soon as the previous answer's headers are in; why 2, in
 * ./http.ts). A 2xx answer accepts the batch; any other status, a timeout or a socket error rejects it (the slot's
 * connection is replaced once the other request on it is answered).
 *
 * `npm run bench:generators` measured pipelining 1 → 2, and then batch templates and released payloads
 * (core/events/encoding.ts BatchTemplate): each raised ours/autocannon; on a quiet window the generator is CPU-bound,
 * its CPU now about half encoding (writeLogText most of it) and half undici, the kernel's loopback writes and the
 * loop (docs/measurements.md, "Figures moved from code comments").
 *
 * undici rather than node:http: measured side by side (same process, generator pinned to core 0, the bench's HTTP
 * blackhole on core 1, batch 500, ~200-byte events, rate max, 1 connection, 3 s windows alternating between the two
 * clients, 3 sessions of 8 rounds on a shared 2-core machine at load average 7-17): median events/s undici 196k,
 * 282k, 215k against node:http's Agent 155k, 199k, 165k (undici ahead in 13 of 24 pairs: not slower, within
 * the noise of a loaded machine); at a fixed 20k events/s (batch 100, 2 connections) both held the rate.
 * Re-measure with `npm run bench:generators` (http-json against autocannon with the same body).
 */
import { z } from "zod";
import type { StampedBatch } from "../../core/events/encoding.ts";
import { HttpJsonEncoder, httpJsonContentType } from "../../core/events/http-json.ts";
import { type HttpBatchRequest, httpLoopFields, httpSourceGenerator } from "./http.ts";
import type { GeneratorFactory } from "./types.ts";

/** Scenario block `generator.http-json`. */
export const httpJsonSchema = z
  .object({
    ...httpLoopFields,
    batch: httpLoopFields.batch.default(500),
    /** body framing: one JSON object per line, or one JSON array */
    framing: z.enum(["ndjson", "array"]).default("ndjson"),
    /** request path, default the sink's params.path, else "/" */
    path: z.string().startsWith("/").optional(),
    /** timestamp fields and sent_at: ISO 8601 strings or epoch milliseconds */
    timeFormat: z.enum(["iso", "epoch-ms"]).default("iso"),
    /** per-request timeout, milliseconds */
    timeoutMs: z.number().int().positive().default(60_000),
  })
  .strict();

export type HttpJsonConfig = z.infer<typeof httpJsonSchema>;

/** The request of one batch: any 2xx accepts it; another status rejects it and replaces the connection. */
function jsonRequest(config: HttpJsonConfig, params: Record<string, string>): HttpBatchRequest<StampedBatch> {
  const path = config.path ?? params.path ?? "/";
  return {
    label: `POST ${path}`,
    method: "POST",
    path,
    headers: { "Content-Type": httpJsonContentType(config.framing) },
    answer: (r, b) => {
      if (r.status < 200 || r.status >= 300)
        throw new Error(`HTTP ${r.status}: ${r.body.trim().slice(0, 200)}`);
      return { accepted: b.count };
    },
  };
}

/** Factory "http-json": ctx.target host, port, params.path (default "/"). */
export const httpJson: GeneratorFactory<HttpJsonConfig> = {
  name: "http-json",
  schema: httpJsonSchema,
  create: (config, ctx) =>
    httpSourceGenerator(
      config,
      ctx,
      (source) => new HttpJsonEncoder(source, { framing: config.framing, timeFormat: config.timeFormat }),
      (params) => jsonRequest(config, params),
    ),
};
