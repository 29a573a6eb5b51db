/**
 * The one HTTP client of the generators and of the HTTP verifiers: undici 7 (`Client`, one TCP connection each),
 * HTTP/1.1 with persistent connections (RFC 9112 §9.3), pipelined only where a generator asks for it.
 *
 * - `httpRequest`: one request on a dispatcher; resolves with the status and the whole body as text (every status,
 *   error answers included: the caller decides what a status means); rejects on socket errors and when no answer
 *   (headers, then each body chunk) arrives within `timeoutMs` ("no answer within N ms").
 * - `httpConnection`: a persistent connection with one request in flight at most, or `pipelining` requests; a
 *   pipelined connection is destroyed when its socket closes, so undici never re-sends a request that may have
 *   been delivered (it would re-send every request behind the failed head: a duplicate the ledger cannot see).
 * - `HttpJsonApi`: the verifiers' side — sequential JSON calls to a sink's HTTP API on one persistent connection.
 *
 * The generators' batch transport over these (httpBatchTransport, httpSourceGenerator) is harness/generators/http.ts.
 * Connections open lazily with the first request (undici connects on dispatch), so a refused connect shows up as
 * a failed request, as with node:http's Agent before.
 */
import { Client, type Dispatcher } from "undici";
import { IngestbenchError } from "./errors.ts";
import { authRefusal, type SinkLogin } from "./secrets.ts";

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
  /**
   * may be queued behind an unanswered request on an `httpConnection` with pipelining > 1 (undici pipelines only
   * requests it may treat as idempotent; it writes this one once the previous answer's headers are in)
   */
  pipelined?: boolean;
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
export async function httpRequest(
  dispatcher: Dispatcher,
  spec: HttpRequestSpec,
  origin?: string,
): Promise<HttpAnswer> {
  try {
    const r = await dispatcher.request({
      origin,
      path: spec.path,
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      idempotent: spec.pipelined,
    });
    return { status: r.statusCode, body: await r.body.text() };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code && TIMEOUT_CODES.has(code))
      throw new Error(`no answer within ${spec.timeoutMs} ms`, { cause: err });
    throw err;
  }
}

/**
 * A persistent connection to `host:port` with `pipelining` requests in flight at most (default 1; close it with
 * `destroy()`). A pipelined one is destroyed as soon as its socket closes: undici would otherwise fail only the head
 * request and re-send the rest on a new socket, though the server may have processed them.
 */
export function httpConnection(host: string, port: number, timeoutMs: number, pipelining = 1): Client {
  const client = new Client(httpOrigin(host, port), {
    pipelining,
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // a batch loop sends back to back; keep idle connections long enough for open-loop gaps between batches
    keepAliveTimeout: 60_000,
  });
  // "disconnect" is emitted before undici re-queues the requests behind the head; destroy() fails them instead
  if (pipelining > 1) client.on("disconnect", () => void client.destroy().catch(() => undefined));
  return client;
}

/** An HTTP API answered with an unexpected status. code E_SINK_HTTP; `status` and `body` as received. */
export class SinkHttpError extends IngestbenchError {
  constructor(
    message: string,
    readonly status: number,
    readonly body: string,
  ) {
    super("E_SINK_HTTP", message);
  }
}

/**
 * Sequential JSON calls to a sink's HTTP API (Elasticsearch, Loki, GridDB Web API) on one persistent connection,
 * for the verifiers. `call` sends `body` as JSON (a string is sent as is) and resolves with the status, the body text
 * and the parsed JSON (null when the body is empty or not JSON).
 * @throws IngestbenchError E_VERIFIER_CONNECT when the sink cannot be reached (socket error or timeout)
 * @throws IngestbenchError E_SINK_AUTH on a 401 or 403 when `auth` is given (the message names the user and the
 *   password's variable, never the password)
 * @throws SinkHttpError when the status is not 2xx and not listed in `accept`; the message names the API, the
 *   request and the answer (first 300 characters)
 */
export class HttpJsonApi {
  private client: Client | null = null;

  constructor(
    /** the sink's name for messages, e.g. "Elasticsearch" */
    readonly name: string,
    public host: string,
    public port: number,
    private readonly headers: Record<string, string> = {},
    private readonly timeoutMs = 120_000,
    /** the sink (core/secrets.ts name) and user the headers authenticate as: a 401 or 403 is then E_SINK_AUTH naming the password's variable */
    private readonly auth?: SinkLogin,
  ) {}

  /** Later calls go to `host`:`port` (Verifier.retarget); the open connection is closed. */
  retarget(host: string, port: number): void {
    if (host === this.host && port === this.port) return;
    this.host = host;
    this.port = port;
    const c = this.client;
    this.client = null;
    c?.destroy().catch(() => undefined);
  }

  async call(
    method: HttpRequestSpec["method"],
    path: string,
    body?: unknown,
    accept: readonly number[] = [],
  ): Promise<{ status: number; body: string; json: unknown }> {
    if (this.client === null || this.client.closed || this.client.destroyed)
      this.client = httpConnection(this.host, this.port, this.timeoutMs);
    const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const headers: Record<string, string> = { ...this.headers };
    if (text !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
      headers["Content-Type"] = "application/json";
    let r: HttpAnswer;
    try {
      r = await httpRequest(this.client, { method, path, headers, body: text, timeoutMs: this.timeoutMs });
    } catch (err) {
      const c = this.client;
      this.client = null;
      c?.destroy().catch(() => undefined);
      throw new IngestbenchError(
        "E_VERIFIER_CONNECT",
        `verifier cannot reach ${this.name} at ${this.host}:${this.port} (${method} ${path}): ${(err as Error).message}`,
        { cause: err },
      );
    }
    if ((r.status === 401 || r.status === 403) && this.auth && !accept.includes(r.status)) {
      throw new IngestbenchError(
        "E_SINK_AUTH",
        `${this.name} answered ${method} ${path.slice(0, 200)} with ${r.status}: ${authRefusal(this.auth)}`,
      );
    }
    if ((r.status < 200 || r.status >= 300) && !accept.includes(r.status)) {
      throw new SinkHttpError(
        `${this.name} answered ${method} ${path.slice(0, 200)} with ${r.status}: ${r.body.trim().slice(0, 300)}`,
        r.status,
        r.body,
      );
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
