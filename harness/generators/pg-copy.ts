/**
 * Generator "pg-copy": bulk-loads PostgreSQL with `COPY <table> (cols) FROM STDIN` in text format, one COPY per
 * batch (one COPY = one transaction = one request), as the sequential bulk-inserting client of write-up 004 does.
 *
 * A single dispatcher hands batches to `connections` connections in seq order, so the seqs sent are always the
 * contiguous prefix 0..sent-1 (rejected batches included, listed in `rejectedRanges`):
 * - rate "max": closed loop; batch k starts as soon as a connection is free; latency = COPY start → completion.
 * - rate R events/s: open loop; batch k is due at t0 + k·batch/R; it waits for its due time and then for a free
 *   connection, and its latency is measured from the due time (coordinated-omission correction: a slow sink
 *   shows up as latency, not as a lower offered rate hidden from the numbers).
 * A failed COPY counts its batch as rejected and the run goes on; after MAX_CONSECUTIVE_FAILURES failures in a row
 * (connect or COPY) the generator stops and reports the errors. Memory is flat: one encoded batch per connection,
 * a fixed-size HDR histogram, a bounded error list. The loop itself (pacing, slots, ranges, stop) is loop.ts; this
 * file is the COPY transport and the COPY text encoder adapter.
 */
import { finished } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import { copyFromStatement, encodeCopyBatch, restampSentAt } from "../../core/events/copy-text.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { passwordOption } from "../../core/secrets.ts";
import { batchLoopFields, runSourceBatchLoop, type BatchTransport, type EncodedBatch, type SourceBatchEncoder } from "./loop.ts";
import type { Generator, GeneratorContext, GeneratorFactory, GeneratorFinal, GeneratorProgress } from "./types.ts";

export { MAX_CONSECUTIVE_FAILURES, PROGRESS_INTERVAL_MS } from "./loop.ts";

/** Scenario block `generator.pg-copy`. */
export const pgCopySchema = z
  .object({
    ...batchLoopFields,
    /** rows per COPY */
    batch: batchLoopFields.batch.default(8000),
    /** default: the sink's params.user, else "postgres" */
    user: z.string().min(1).optional(),
    /** default: the sink's params.database, else "postgres" */
    database: z.string().min(1).optional(),
  })
  .strict();

export type PgCopyConfig = z.infer<typeof pgCopySchema>;

/** Context of this generator; `replayFile` (optional) replays a log file's lines into the last string field. */
export type PgCopyContext = GeneratorContext;

/** One COPY batch: COPY text lines of seqs [from, from + count) (sent_at re-stamped in place). */
interface CopyBatch extends EncodedBatch {
  payload: Buffer;
}

/** A connection slot's client; `broken` once the client emitted an error (the loop then reconnects). */
interface PgConn {
  client: pg.Client;
  broken: boolean;
}

class PgCopyGenerator implements Generator {
  private readonly source: EventSource;
  private readonly statement: string;

  constructor(private readonly config: PgCopyConfig, private readonly ctx: PgCopyContext) {
    this.source = createEventSource({ fields: ctx.fields, seed: config.seed, genId: ctx.genId, genBase: ctx.genBase, replayFile: ctx.replayFile });
    this.statement = copyFromStatement(ctx.target.params.table ?? "ib_events", ctx.fields);
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port, params } = this.ctx.target;
    const transport: BatchTransport<PgConn, CopyBatch> = {
      label: "COPY",
      address: `${host}:${port}`,
      connect: async (slot) => {
        const client = new pg.Client({
          host,
          port,
          user: this.config.user ?? params.user ?? "postgres",
          database: this.config.database ?? params.database ?? "postgres",
          // INGESTBENCH_POSTGRES_PASSWORD from the generator's environment (core/secrets.ts), never its spec
          ...passwordOption("postgres"),
          connectionTimeoutMillis: 10_000,
          application_name: `ingestbench-pg-copy-${this.ctx.genId}-${slot}`,
        });
        const conn: PgConn = { client, broken: false };
        client.on("error", () => { conn.broken = true; });
        try {
          await client.connect();
          return conn;
        } catch (err) {
          await client.end().catch(() => undefined);
          throw err;
        }
      },
      alive: (conn) => !conn.broken,
      send: async (conn, b) => {
        const stream = conn.client.query(copyFrom(this.statement));
        const done = finished(stream);
        stream.end(b.payload);
        await done;
        if (stream.rowCount !== b.count) throw new Error(`COPY stored ${stream.rowCount} rows of ${b.count}`);
        return { accepted: b.count };
      },
      close: (conn) => conn.client.end(),
    };
    const encoder: SourceBatchEncoder<CopyBatch> = {
      encode: (from, count) => ({ from, count, payload: encodeCopyBatch(this.source, from, count, new Date(0)) }),
      stamp: (b, sentAt) => restampSentAt(b.payload, sentAt),
    };
    return runSourceBatchLoop(this.config, { signal, onProgress, genId: this.ctx.genId }, transport, this.source, encoder);
  }
}

/** Factory "pg-copy": `create(config, ctx)` → Generator; ctx.target.params.table (default "ib_events"), user, database. */
export const pgCopy: GeneratorFactory<PgCopyConfig> = {
  name: "pg-copy",
  // the contract types the schema by its output; with defaults its input differs, hence the cast
  schema: pgCopySchema,
  create: (config, ctx) => new PgCopyGenerator(config, ctx),
};
