/**
 * Generator "http-json": POSTs batches of N events as one HTTP/1.1 request body (encoder: ../events/http-json.ts),
 * NDJSON (`application/x-ndjson`) or a JSON array (`application/json`), to `http://<host>:<port><path>` — the shape
 * Fluent Bit's and Vector's http inputs take (seed 001: batch × count matrices).
 *
 * Each connection slot has its own keep-alive agent with one socket (RFC 9112 persistent connections), so a slot
 * is one TCP connection with one request in flight. A 2xx answer accepts the batch; any other status, a timeout or
 * a socket error rejects it (the slot's agent is replaced). Uses node:http rather than undici (not a dependency).
 */
import { Agent, request } from "node:http";
import { z } from "zod";
import type { StampedBatch } from "../events/encoding.ts";
import { HttpJsonEncoder, httpJsonContentType } from "../events/http-json.ts";
import { createEventSource, type EventSource } from "../events/source.ts";
import { batchLoopFields, runSourceBatchLoop, type BatchTransport } from "./loop.ts";
import type { Generator, GeneratorContext, GeneratorFactory, GeneratorFinal, GeneratorProgress } from "./types.ts";

/** Scenario block `generator.http-json`. */
export const httpJsonSchema = z
  .object({
    ...batchLoopFields,
    batch: batchLoopFields.batch.default(500),
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

interface HttpConn {
  agent: Agent;
}

/** One HTTP request; resolves with the status and body (capped at 64 KiB), rejects on socket errors or timeout. */
export function httpPost(opts: { host: string; port: number; path: string; agent: Agent; headers: Record<string, string | number>; body: Uint8Array; timeoutMs: number; method?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: opts.host, port: opts.port, path: opts.path, method: opts.method ?? "POST", agent: opts.agent, headers: { ...opts.headers, "Content-Length": opts.body.length } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => { if (size < 65536) { chunks.push(c); size += c.length; } });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on("error", reject);
    req.end(opts.body);
  });
}

class HttpJsonGenerator implements Generator {
  private readonly source: EventSource;
  private readonly encoder: HttpJsonEncoder;

  constructor(private readonly config: HttpJsonConfig, private readonly ctx: GeneratorContext) {
    this.source = createEventSource({ fields: ctx.fields, seed: config.seed, genId: ctx.genId, replayFile: ctx.replayFile });
    this.encoder = new HttpJsonEncoder(this.source, { framing: config.framing, timeFormat: config.timeFormat });
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port, params } = this.ctx.target;
    const path = this.config.path ?? params.path ?? "/";
    const headers = { "Content-Type": httpJsonContentType(this.config.framing) };
    const transport: BatchTransport<HttpConn, StampedBatch> = {
      label: `POST ${path}`,
      address: `${host}:${port}`,
      connect: async () => ({ agent: new Agent({ keepAlive: true, maxSockets: 1 }) }),
      send: async (conn, b) => {
        const r = await httpPost({ host, port, path, agent: conn.agent, headers, body: b.payload, timeoutMs: this.config.timeoutMs });
        if (r.status < 200 || r.status >= 300) throw new Error(`HTTP ${r.status}: ${r.body.trim().slice(0, 200)}`);
        return { accepted: b.count };
      },
      close: async (conn) => conn.agent.destroy(),
    };
    return runSourceBatchLoop(this.config, { signal, onProgress, genId: this.ctx.genId }, transport, this.source, this.encoder);
  }
}

/** Factory "http-json": ctx.target host, port, params.path (default "/"). */
export const httpJson: GeneratorFactory<HttpJsonConfig> = {
  name: "http-json",
  schema: httpJsonSchema,
  create: (config, ctx) => new HttpJsonGenerator(config, ctx),
};
