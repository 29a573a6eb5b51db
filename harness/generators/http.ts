/**
 * The one HTTP client of the generators (and of the HTTP verifiers): undici 7 (`Client`, one TCP connection each),
 * HTTP/1.1 with persistent connections (RFC 9112 §9.3) and no pipelining, so a connection slot of the batch loop
 * (loop.ts) is one connection with one request in flight.
 *
 * - `httpRequest`: one request on a dispatcher; resolves with the status and the whole body as text (every status,
 *   error answers included: the caller decides what a status means); rejects on socket errors and when no answer
 *   (headers, then each body chunk) arrives within `timeoutMs` ("no answer within N ms").
 * - `httpBatchTransport`: a `BatchTransport` that sends each encoded batch as the request body on the slot's own
 *   `Client` and maps the answer to a `SendResult` through the generator's `answer` function. `answer` may throw:
 *   the loop then rejects the whole batch and replaces the connection (loop.ts); returning all seqs as rejected
 *   keeps the connection (what an error answer of a healthy server should do; `refusalAnswer` builds such an answer).
 * - `httpSourceGenerator`: the whole generator of such a protocol (es-bulk, loki-push, griddb-webapi, http-json):
 *   event source, encoder, and per run the source batch loop over `httpBatchTransport`.
 *
 * - `HttpJsonApi`: the verifiers' side — sequential JSON calls to a sink's HTTP API on one persistent connection.
 *
 * Connections open lazily with the first request (undici connects on dispatch), so a refused connect shows up as
 * a failed send of that batch, as with node:http's Agent before.
 *
 * Measured against node:http (`npm run bench:generators`, http-json, batch 500, ~200-byte events, one pinned core,
 * same machine, same run conditions): see the http-json.ts file comment for the numbers and the choice.
 */
import { Client, type Dispatcher } from "undici";
import { IngestbenchError } from "../../core/errors.ts";
import type { StampedBatch } from "../../core/events/encoding.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { type BatchLoopOptions, type BatchTransport, type EncodedBatch, runSourceBatchLoop, type SendResult, type SourceBatchEncoder } from "./loop.ts";
import type { Generator, GeneratorContext } from "./types.ts";

/** Status and body text of an HTTP answer. */
export interface HttpAnswer {
  status: number;
  body: string;
}

/** One request. `body` is sent with its Content-Length (undici sets it for strings and byte arrays). */
export interface HttpRequestSpec {
  method: "GET" | "POST" | "PUT" | "DELETE" | "HEAD";
  /** path and query, starting with "/" */
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** headers and each body chunk must arrive within this many milliseconds */
  timeoutMs: number;
}

/** `http://host:port` (IPv6 literals in brackets, RFC 3986 §3.2.2). */
export function httpOrigin(host: string, port: number): string {
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/** undici's timeout errors, named by what the caller waited for. */
const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * Send one request on `dispatcher` (a Client, Pool or Agent; with an Agent, `path` must be an absolute URL's path
 * and `origin` is required). Resolves with any status; rejects with "no answer within N ms" on a timeout, or
 * undici's error (its `code` kept as the cause) on a socket error.
 */
export async function httpRequest(dispatcher: Dispatcher, spec: HttpRequestSpec, origin?: string): Promise<HttpAnswer> {
  try {
    const r = await dispatcher.request({
      origin,
      path: spec.path,
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
    });
    return { status: r.statusCode, body: await r.body.text() };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code && TIMEOUT_CODES.has(code)) throw new Error(`no answer within ${spec.timeoutMs} ms`, { cause: err });
    throw err;
  }
}

/** A persistent connection to `host:port` with one request in flight at most (close it with `destroy()`). */
export function httpConnection(host: string, port: number, timeoutMs: number): Client {
  return new Client(httpOrigin(host, port), {
    pipelining: 1,
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // a batch loop sends back to back; keep idle connections long enough for open-loop gaps between batches
    keepAliveTimeout: 60_000,
  });
}

export interface HttpBatchTransportOptions<B extends EncodedBatch> {
  host: string;
  port: number;
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
export function httpBatchTransport<B extends EncodedBatch>(o: HttpBatchTransportOptions<B>): BatchTransport<Client, B> {
  return {
    label: o.label,
    address: `${o.host}:${o.port}`,
    connect: async () => httpConnection(o.host, o.port, o.timeoutMs),
    alive: (c) => !c.closed && !c.destroyed,
    send: async (c, b) => o.answer(await httpRequest(c, { method: o.method, path: o.path, headers: o.headers, body: b.payload, timeoutMs: o.timeoutMs }), b),
    close: async (c) => {
      await c.destroy().catch(() => undefined);
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
export type HttpBatchRequest<B extends EncodedBatch> = Omit<HttpBatchTransportOptions<B>, "host" | "port" | "timeoutMs">;

/** The config fields httpSourceGenerator reads: the batch loop's (loop.ts batchLoopFields) and a timeout (ms). */
export type HttpGeneratorConfig = Pick<BatchLoopOptions, "batch" | "connections" | "rate" | "requests" | "duplicateEvery"> & { seed: number; timeoutMs: number };

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
  const source = createEventSource({ fields: ctx.fields, seed: config.seed, genId: ctx.genId, replayFile: ctx.replayFile });
  const encode = encoder(source);
  return {
    run(signal, onProgress) {
      const { host, port, params } = ctx.target;
      const transport = httpBatchTransport<StampedBatch>({ host, port, timeoutMs: config.timeoutMs, ...request(params) });
      return runSourceBatchLoop(config, { signal, onProgress, genId: ctx.genId }, transport, source, encode);
    },
  };
}

/** An HTTP API answered with an unexpected status. code E_SINK_HTTP; `status` and `body` as received. */
export class SinkHttpError extends IngestbenchError {
  constructor(message: string, readonly status: number, readonly body: string) {
    super("E_SINK_HTTP", message);
  }
}

/**
 * Sequential JSON calls to a sink's HTTP API (Elasticsearch, Loki, GridDB Web API) on one persistent connection,
 * for the verifiers. `call` sends `body` as JSON (a string is sent as is) and resolves with the status, the body text
 * and the parsed JSON (null when the body is empty or not JSON).
 * @throws IngestbenchError E_VERIFIER_CONNECT when the sink cannot be reached (socket error or timeout)
 * @throws SinkHttpError when the status is not 2xx and not listed in `accept`; the message names the API, the
 *   request and the answer (first 300 characters)
 */
export class HttpJsonApi {
  private client: Client | null = null;

  constructor(
    /** the sink's name for messages, e.g. "Elasticsearch" */
    readonly name: string,
    readonly host: string,
    readonly port: number,
    private readonly headers: Record<string, string> = {},
    private readonly timeoutMs = 120_000,
  ) {}

  async call(method: HttpRequestSpec["method"], path: string, body?: unknown, accept: readonly number[] = []): Promise<{ status: number; body: string; json: unknown }> {
    if (this.client === null || this.client.closed || this.client.destroyed) this.client = httpConnection(this.host, this.port, this.timeoutMs);
    const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const headers: Record<string, string> = { ...this.headers };
    if (text !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
    let r: HttpAnswer;
    try {
      r = await httpRequest(this.client, { method, path, headers, body: text, timeoutMs: this.timeoutMs });
    } catch (err) {
      const c = this.client;
      this.client = null;
      c?.destroy().catch(() => undefined);
      throw new IngestbenchError("E_VERIFIER_CONNECT", `verifier cannot reach ${this.name} at ${this.host}:${this.port} (${method} ${path}): ${(err as Error).message}`, { cause: err });
    }
    if ((r.status < 200 || r.status >= 300) && !accept.includes(r.status)) {
      throw new SinkHttpError(`${this.name} answered ${method} ${path.slice(0, 200)} with ${r.status}: ${r.body.trim().slice(0, 300)}`, r.status, r.body);
    }
    let json: unknown = null;
    if (r.body.length > 0) {
      try {
        json = JSON.parse(r.body);
      } catch {
        json = null;
      }
    }
    return { status: r.status, body: r.body, json };
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.destroy().catch(() => undefined);
  }
}
