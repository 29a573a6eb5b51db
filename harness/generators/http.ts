/**
 * The one HTTP client of the generators (and of the HTTP verifiers): undici 7 (`Client`, one TCP connection each),
 * HTTP/1.1 with persistent connections (RFC 9112 §9.3). A connection of the batch loop (loop.ts) carries
 * `pipelining` batches (default 2 for the generators over httpSourceGenerator, 1 for other callers): undici writes
 * the next request as soon as the previous answer's headers are in (its `blocking`, the default for a request with a
 * body), so the server never holds two requests it has not begun to answer, and the generator's next batch is already
 * queued while the answer travels. A connection that closes fails every request on it; none is re-sent (core/http.ts).
 *
 * Why 2 in flight: with one, each 500-event batch is a round trip the process sleeps through once it has
 * encoded the next batch (traced per batch: the answer takes longer than
 * encoding the next batch, and the process sleeps half the time: docs/measurements.md, "Figures moved from code
 * comments"), and each
 * wake-up waits for the shared core. The write itself is not the stall: the whole body is in the kernel when
 * `request()` returns (socket writableLength 0), so encoding in slices that yield to the socket does not help. A worker
 * thread would encode beside the loop, but the bench pins the generator to one core, and the process was already
 * sleeping, not short of CPU. Measured in one process alternating configs, 2 in flight beat
 * 1, 3, and 2 connections of 1 (docs/measurements.md, "Figures moved from code comments"); 2 keeps one connection
 * per slot and needs no more memory than one batch per request in flight.
 *
 * - `httpBatchTransport`: a `BatchTransport` that sends each encoded batch as the request body on the slot's own
 *   `Client` and maps the answer to a `SendResult` through the generator's `answer` function. `answer` may throw:
 *   the loop then rejects the whole batch and replaces the connection (loop.ts); returning all seqs as rejected
 *   keeps the connection (what an error answer of a healthy server should do; `refusalAnswer` builds such an answer).
 * - `httpSourceGenerator`: the whole generator of such a protocol (es-bulk, loki-push, griddb-webapi, http-json):
 *   event source, encoder, and per run the source batch loop over `httpBatchTransport`.
 *
 * The request, connection and verifier client (httpRequest, httpConnection, HttpJsonApi) are core/http.ts.
 *
 * Connections open lazily with the first request (undici connects on dispatch), so a refused connect shows up as
 * a failed send of that batch, as with node:http's Agent before.
 *
 * Measured against node:http (`npm run bench:generators`, http-json, batch 500, ~200-byte events, one pinned core,
 * same machine, same run conditions): see the http-json.ts file comment for the numbers and the choice; pipelining 2
 * against 1 in `npm run bench:generators` is in the http-json.ts file comment too.
 */
import type { Client } from "undici";
import { z } from "zod";
import { httpConnection, httpRequest, type HttpAnswer } from "../../core/http.ts";
import type { StampedBatch } from "../../core/events/encoding.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import {
  batchLoopFields,
  type BatchLoopOptions,
  type BatchTransport,
  type EncodedBatch,
  runSourceBatchLoop,
  type SendResult,
  type SourceBatchEncoder,
} from "./loop.ts";
import type { Generator, GeneratorContext } from "./types.ts";

export interface HttpBatchTransportOptions<B extends EncodedBatch> {
  host: string;
  port: number;
  /** requests in flight per connection (the batch loop's `pipelining`); default 1 */
  pipelining?: number;
  /** request noun for error messages, e.g. "POST /_bulk" */
  label: string;
  method: "POST" | "PUT";
  /** path and query of every request */
  path: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** what the answer means for the batch; throw to reject the whole batch and replace the connection */
  answer(r: HttpAnswer, batch: B): SendResult;
}

/** The batch loop's transport for a protocol that sends one batch per HTTP request body (see the file comment). */
export function httpBatchTransport<B extends EncodedBatch>(
  o: HttpBatchTransportOptions<B>,
): BatchTransport<Client, B> {
  const pipelining = o.pipelining ?? 1;
  const pipelined = pipelining > 1;
  return {
    label: o.label,
    address: `${o.host}:${o.port}`,
    connect: async () => httpConnection(o.host, o.port, o.timeoutMs, pipelining),
    alive: (c) => !c.closed && !c.destroyed,
    send: async (c, b) =>
      o.answer(
        await httpRequest(c, {
          method: o.method,
          path: o.path,
          headers: o.headers,
          body: b.payload,
          timeoutMs: o.timeoutMs,
          pipelined,
        }),
        b,
      ),
    // graceful: requests already on the connection (pipelining) get their own answers, so a batch the server took
    // is not reported as rejected because an earlier one failed; each request has its own timeout
    close: async (c) => {
      await c.close().catch(() => undefined);
    },
  };
}

/** Every seq of a batch as rejected, with one reason: the answer of a receiver that refused the whole request. */
export function rejectAll(b: EncodedBatch, why: string): SendResult {
  return { accepted: 0, rejectedSeqs: Array.from({ length: b.count }, (_, i) => b.from + i), errors: [why] };
}

/**
 * An `answer` for a protocol whose parser throws a typed error: `parse(r, b)` maps an answer to the batch's result;
 * an error for which `refusal(err)` gives a reason (a whole-request refusal by a healthy server) rejects every seq of
 * the batch with that reason and keeps the connection; any other error is thrown (batch rejected, connection
 * replaced).
 */
export function refusalAnswer<B extends EncodedBatch>(
  parse: (r: HttpAnswer, b: B) => SendResult,
  refusal: (err: unknown) => string | undefined,
): (r: HttpAnswer, b: B) => SendResult {
  return (r, b) => {
    try {
      return parse(r, b);
    } catch (err) {
      const why = refusal(err);
      if (why !== undefined) return rejectAll(b, why);
      throw err;
    }
  };
}

/** What an HTTP batch generator sends: its transport's options but the target and the timeout. */
export type HttpBatchRequest<B extends EncodedBatch> = Omit<
  HttpBatchTransportOptions<B>,
  "host" | "port" | "timeoutMs"
>;

/**
 * zod fields of a generator over httpSourceGenerator: the batch loop's, and `pipelining` (requests in flight per
 * connection, default 2: see the file comment).
 */
export const httpLoopFields = {
  ...batchLoopFields,
  /** HTTP/1.1 requests in flight per connection (pipelining); 1 = send the next batch only after the answer */
  pipelining: z.number().int().positive().max(16).default(2),
};

/** The config fields httpSourceGenerator reads: the batch loop's (httpLoopFields) and a timeout (ms). */
export type HttpGeneratorConfig = Pick<
  BatchLoopOptions,
  "batch" | "connections" | "pipelining" | "rate" | "requests" | "duplicateEvery"
> & { seed: number; timeoutMs: number };

/**
 * The generator of a protocol that sends one encoded batch per HTTP request: the event source of `ctx` (seeded by
 * config.seed, or replaying ctx.replayFile) and `encoder(source)`, made at once; each run drives the source batch
 * loop (loop.ts) over httpBatchTransport to ctx.target with `request(ctx.target.params)` and config.timeoutMs.
 */
export function httpSourceGenerator(
  config: HttpGeneratorConfig,
  ctx: GeneratorContext,
  encoder: (source: EventSource) => SourceBatchEncoder<StampedBatch>,
  request: (params: Record<string, string>) => HttpBatchRequest<StampedBatch>,
): Generator {
  const source = createEventSource({
    fields: ctx.fields,
    seed: config.seed,
    genId: ctx.genId,
    genBase: ctx.genBase,
    replayFile: ctx.replayFile,
  });
  const encode = encoder(source);
  return {
    run(signal, onProgress) {
      const { host, port, params } = ctx.target;
      const transport = httpBatchTransport<StampedBatch>({
        host,
        port,
        timeoutMs: config.timeoutMs,
        pipelining: config.pipelining,
        ...request(params),
      });
      return runSourceBatchLoop(config, { signal, onProgress, genId: ctx.genId }, transport, source, encode);
    },
  };
}
