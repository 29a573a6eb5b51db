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
 *
 * The loop encodes the next batch while one is in flight, but encoding is synchronous: started at once, it would hold
 * the event loop (about 13 ms per 8000 rows) before the server's CopyInResponse could be read, so the batch's data
 * would leave only after the next batch was encoded, and the server would idle meanwhile. So the next batch is
 * encoded only once the in-flight batch's data has been handed to the socket (or its COPY ended): the encoding then
 * overlaps the server's parsing and insert. The bytes sent are the same; rows/s rose
 * by half, and came near psql's \copy of the same bytes (docs/measurements.md, "Figures moved from code comments").
 *
 * A batch goes as ONE CopyData message (one stream.write; pg-copy-streams frames each written chunk as a message).
 * Messages of 64 KiB (subarray writes, as psql's ~8 KiB ones let the server parse as they come) did not help: same
 * machine, 250 COPYs of 8000 beside psql, 4 alternating rounds, load average 4.3–5.3: median 140.5k rows/s and 7.34 s
 * server CPU for one message, 126.9k and 8.18 s for 64 KiB, 158.5k and 7.21 s for psql; the server's CPU per row is
 * psql's. The earlier shortfall was the bench's: its first side on a fresh server (ours) created and zero-filled the
 * WAL segments the later sides reuse (bench/db-loaders.ts warmWal). With that fixed, 0.95x and 0.98x psql (two runs of
 * `--db-rounds 3`, load average 3.8–5.0; server CPU 22.9 s ours vs 25.0 s, 22.7 s vs 22.2 s). Each side's own rounds
 * still differ by up to 1.7x with other benchmarks on the 2 cores, more than the goal's margin; our client needs ~4x
 * psql's CPU per row (it generates the rows: ~4 ms of 8000 rows' ~28 ms server time a batch, 0.7 ms of it stamping
 * sent_at), so a busy load core can delay it where psql's file reads are not.
 */
import { finished } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import { copyFromStatement, encodeCopyBatch, restampSentAt } from "../../core/events/copy-text.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { passwordOption } from "../../core/secrets.ts";
import {
  batchLoopFields,
  runSourceBatchLoop,
  type BatchTransport,
  type EncodedBatch,
  type LoadableSource,
  type SourceBatchEncoder,
} from "./loop.ts";
import type {
  Generator,
  GeneratorContext,
  GeneratorFactory,
  GeneratorFinal,
  GeneratorProgress,
} from "./types.ts";

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

  constructor(
    private readonly config: PgCopyConfig,
    private readonly ctx: PgCopyContext,
  ) {
    this.source = createEventSource({
      fields: ctx.fields,
      seed: config.seed,
      genId: ctx.genId,
      genBase: ctx.genBase,
      replayFile: ctx.replayFile,
    });
    this.statement = copyFromStatement(ctx.target.params.table ?? "ib_events", ctx.fields);
  }

  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { host, port, params } = this.ctx.target;
    // settles once the latest batch's data is in the socket or its COPY has ended (see the file comment)
    let handedOver: Promise<void> = Promise.resolve();
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
        client.on("error", () => {
          conn.broken = true;
        });
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
        let written: () => void = () => undefined;
        handedOver = new Promise<void>((resolve) => {
          written = resolve;
        });
        // the write's callback runs once pg-copy-streams has handed the data to the socket (after the server's
        // CopyInResponse and, for a batch larger than the socket's buffer, its drain); the same bytes as end(payload)
        stream.write(b.payload, () => written());
        stream.end();
        void done.finally(written).catch(() => undefined);
        await done;
        if (stream.rowCount !== b.count) throw new Error(`COPY stored ${stream.rowCount} rows of ${b.count}`);
        return { accepted: b.count };
      },
      close: (conn) => conn.client.end(),
    };
    const encoder: SourceBatchEncoder<CopyBatch> = {
      encode: (from, count) => ({
        from,
        count,
        payload: encodeCopyBatch(this.source, from, count, new Date(0)),
      }),
      stamp: (b, sentAt) => restampSentAt(b.payload, sentAt),
    };
    // the source as the loop sees it: a batch's rows are loaded (and so encoded) only once the in-flight batch's data
    // is in the socket (see the file comment)
    const source: LoadableSource = {
      load: async (from, count) => {
        await handedOver;
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
      encoder,
    );
  }
}

/** Factory "pg-copy": `create(config, ctx)` → Generator; ctx.target.params.table (default "ib_events"), user, database. */
export const pgCopy: GeneratorFactory<PgCopyConfig> = {
  name: "pg-copy",
  // the contract types the schema by its output; with defaults its input differs, hence the cast
  schema: pgCopySchema,
  create: (config, ctx) => new PgCopyGenerator(config, ctx),
};
