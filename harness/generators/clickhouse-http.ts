/**
 * Generator "clickhouse-http": inserts straight into ClickHouse over its HTTP interface, one
 * `POST /?query=INSERT INTO <table> (<cols>) FORMAT JSONEachRow` per batch, the body encoded by
 * ../events/clickhouse-http.ts (timestamps and sent_at as epoch milliseconds, for the verifier's UInt64 columns).
 * The send loop (slots, pacing, latency, rejected ranges, stop) is loop.ts; HTTP (undici, one connection per slot) is
 * ./http.ts.
 *
 * A 2xx answer accepts the batch. An error answer (ClickHouse's "Code: <n>, e.displayText() = ..." text) rejects
 * the whole batch, which is never resent: code 252 TOO_MANY_PARTS (inserts outpacing merges) is reported as
 * "retryable", any other code with its message. The connection stays open after an error answer; a socket error or
 * a timeout rejects the batch as well and replaces the slot's connection. As in every batch generator, ten failed
 * batches in a row stop the generator (loop.ts).
 *
 * The loop encodes the next batch while one is in flight, but encoding is synchronous (about 12 ms per 8000 rows)
 * and undici writes a request only on a later turn of the event loop: encoded at once, the next batch would hold the
 * request just sent, and the server would wait for it. So loading the next batch's rows first yields one turn
 * (setImmediate), in which undici hands the request to the socket (the whole 2 MB body of 8000 rows, over loopback);
 * the encoding then overlaps the server's parsing and insert. The bytes sent are the same; rows/s rose
 * on a busy machine, little on a quiet one, the server's core spending the gap on merges (docs/measurements.md,
 * "Figures moved from code comments").
 */
import { z } from "zod";
import {
  ClickHouseJsonEachRowEncoder,
  clickHouseInsertQuery,
  parseClickHouseError,
} from "../../core/events/clickhouse-http.ts";
import { clickhouseHttpAuth } from "../../plugins/sinks/clickhouse/auth.ts";
import type { StampedBatch } from "../../core/events/encoding.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { httpBatchTransport, rejectAll } from "./http.ts";
import { batchLoopFields, runSourceBatchLoop, type LoadableSource } from "./loop.ts";
import type {
  Generator,
  GeneratorContext,
  GeneratorFactory,
  GeneratorFinal,
  GeneratorProgress,
} from "./types.ts";

/** Scenario block `generator.clickhouse-http`. */
export const clickhouseHttpSchema = z
  .object({
    ...batchLoopFields,
    batch: batchLoopFields.batch.default(8000),
    /** per-request timeout, milliseconds */
    timeoutMs: z.number().int().positive().default(60_000),
    /** ClickHouse settings of each INSERT, passed as URL parameters by ClickHouse's names (e.g. max_insert_block_size) */
    settings: z
      .record(
        z.string().regex(/^[a-z_][a-z0-9_]*$/, "a ClickHouse setting name"),
        z.union([z.string(), z.number()]),
      )
      .optional(),
  })
  .strict();

export type ClickHouseHttpConfig = z.infer<typeof clickhouseHttpSchema>;

/** The request path of an insert: `/?database=…&query=INSERT … FORMAT JSONEachRow&<settings>`. */
export function clickhouseInsertPath(
  query: string,
  database: string | undefined,
  settings: Record<string, string | number> = {},
): string {
  const p = new URLSearchParams();
  if (database) p.set("database", database);
  for (const [k, v] of Object.entries(settings)) p.set(k, String(v));
  p.set("query", query);
  return `/?${p}`;
}

class ClickHouseHttpGenerator implements Generator {
  private readonly source: EventSource;
  private readonly encoder: ClickHouseJsonEachRowEncoder;

  constructor(
    private readonly config: ClickHouseHttpConfig,
    private readonly ctx: GeneratorContext,
  ) {
    this.source = createEventSource({
      fields: ctx.fields,
      seed: config.seed,
      genId: ctx.genId,
      genBase: ctx.genBase,
      replayFile: ctx.replayFile,
    });
    this.encoder = new ClickHouseJsonEachRowEncoder(this.source, "epoch-ms");
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port, params } = this.ctx.target;
    const table = params.table ?? "ib_events";
    const path = clickhouseInsertPath(
      clickHouseInsertQuery(table, this.ctx.fields),
      params.database,
      this.config.settings,
    );
    // Basic auth when INGESTBENCH_CLICKHOUSE_PASSWORD is set (plugins/sinks/clickhouse/auth.ts)
    const headers = { "Content-Type": "application/x-ndjson", ...clickhouseHttpAuth(params).headers };
    const transport = httpBatchTransport<StampedBatch>({
      host,
      port,
      label: `INSERT INTO ${table}`,
      method: "POST",
      path,
      headers,
      timeoutMs: this.config.timeoutMs,
      answer: (r, b) => {
        const e = parseClickHouseError(r.status, r.body);
        if (e === null) return { accepted: b.count };
        return rejectAll(
          b,
          `HTTP ${e.status}${e.code !== null ? `, code ${e.code}` : ""}${e.retryable ? " (retryable, not resent)" : ""}: ${e.message.slice(0, 300)}`,
        );
      },
    });
    // the source as the loop sees it: loading a batch's rows first yields one turn, so that the request just sent
    // goes out before the next batch is encoded (see the file comment)
    const source: LoadableSource = {
      load: async (from, count) => {
        await new Promise<void>((resolve) => setImmediate(resolve));
        await this.source.load(from, count);
      },
      close: () => this.source.close(),
      logBytes: (from, count) => this.source.logBytes(from, count),
    };
    return runSourceBatchLoop(
      this.config,
      { signal, onProgress, genId: this.ctx.genId },
      transport,
      source,
      this.encoder,
    );
  }
}

/** Factory "clickhouse-http": ctx.target host and port (the HTTP interface), params.table (default "ib_events"), params.database. */
export const clickhouseHttp: GeneratorFactory<ClickHouseHttpConfig> = {
  name: "clickhouse-http",
  schema: clickhouseHttpSchema,
  create: (config, ctx) => new ClickHouseHttpGenerator(config, ctx),
};
