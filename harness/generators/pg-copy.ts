/**
 * Generator "pg-copy": bulk-loads PostgreSQL with `COPY <table> (cols) FROM STDIN` in text format, one COPY per
 * batch (one COPY = one transaction = one request), as the sequential bulk-inserting client of seed 004 does.
 *
 * A single dispatcher hands batches to `connections` connections in seq order, so the seqs sent are always the
 * contiguous prefix 0..sent-1 (rejected batches included, listed in `rejectedRanges`):
 * - rate "max": closed loop; batch k starts as soon as a connection is free; latency = COPY start → completion.
 * - rate R events/s: open loop; batch k is due at t0 + k·batch/R; it waits for its due time and then for a free
 *   connection, and its latency is measured from the due time (coordinated-omission correction: a slow sink
 *   shows up as latency, not as a lower offered rate hidden from the numbers).
 * A failed COPY counts its batch as rejected and the run goes on; after MAX_CONSECUTIVE_FAILURES failures in a row
 * (connect or COPY) the generator stops and reports the errors. Memory is flat: one encoded batch per connection,
 * a fixed-size HDR histogram, a bounded error list.
 */
import { finished } from "node:stream/promises";
import * as hdr from "hdr-histogram-js";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import { copyFromStatement, encodeCopyBatch, restampSentAt } from "../events/copy-text.ts";
import { createEventSource, type EventSource } from "../events/source.ts";
import type { Generator, GeneratorContext, GeneratorFactory, GeneratorFinal, GeneratorProgress } from "./types.ts";

/** Stop after this many failed requests (connects or COPYs) in a row. */
export const MAX_CONSECUTIVE_FAILURES = 10;
/** onProgress cadence, milliseconds. */
export const PROGRESS_INTERVAL_MS = 250;
const MAX_ERRORS = 20;

/** Scenario block `generator.pg-copy`. */
export const pgCopySchema = z
  .object({
    /** rows per COPY */
    batch: z.number().int().positive().default(8000),
    /** concurrent connections, each running one COPY at a time */
    connections: z.number().int().positive().max(1024).default(1),
    /** "max" (closed loop) or total events per second across connections (open loop) */
    rate: z.union([z.literal("max"), z.number().positive().finite()]).default("max"),
    seed: z.number().int().default(42),
    /** default: the sink's params.user, else "postgres" */
    user: z.string().min(1).optional(),
    /** default: the sink's params.database, else "postgres" */
    database: z.string().min(1).optional(),
  })
  .strict();

export type PgCopyConfig = z.infer<typeof pgCopySchema>;

/** Context of this generator; `replayFile` (optional) replays a log file's lines into the last string field. */
export type PgCopyContext = GeneratorContext;

const nowMs = (): number => performance.now();

/** An abortable sleep that resolves (never rejects) at `ms` from now or on abort. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => { clearTimeout(t); signal.removeEventListener("abort", done); resolve(); };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

interface Conn {
  id: number;
  client: pg.Client | null;
}

class PgCopyGenerator implements Generator {
  private readonly source: EventSource;
  private readonly statement: string;

  constructor(private readonly config: PgCopyConfig, private readonly ctx: PgCopyContext) {
    this.source = createEventSource({ fields: ctx.fields, seed: config.seed, genId: ctx.genId, replayFile: ctx.replayFile });
    this.statement = copyFromStatement(ctx.target.params.table ?? "ib_events", ctx.fields);
  }

  async run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal> {
    const { batch, rate } = this.config;
    const totals: GeneratorProgress = { sent: 0, accepted: 0, rejected: 0, bytes: 0, requests: 0 };
    const rejectedRanges: Array<[number, number]> = [];
    const errors: string[] = [];
    let suppressedErrors = 0;
    let consecutiveFailures = 0;
    // latency in microseconds, 1 µs .. 1 h at 3 significant digits: fixed memory
    const hist = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3, autoResize: false, useWebAssembly: false });
    const stop = new AbortController(); // aborted by the caller's signal or by too many failures
    const onAbort = (): void => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) stop.abort();

    const noteError = (msg: string): void => {
      if (errors.length < MAX_ERRORS) errors.push(msg);
      else suppressedErrors++;
    };
    const failure = (msg: string): void => {
      consecutiveFailures++;
      noteError(msg);
      if (consecutiveFailures >= MAX_CONSECUTIVE_FAILURES && !stop.signal.aborted) {
        noteError(`stopped after ${consecutiveFailures} consecutive failures`);
        stop.abort();
      }
    };

    const progressTimer = setInterval(() => onProgress({ ...totals }), PROGRESS_INTERVAL_MS);
    progressTimer.unref?.();

    // Connection pool: idle connections and waiters for one.
    const idle: Conn[] = [];
    const waiters: Array<(c: Conn | null) => void> = [];
    for (let i = 0; i < this.config.connections; i++) idle.push({ id: i, client: null });
    const acquire = (): Promise<Conn | null> => {
      if (stop.signal.aborted) return Promise.resolve(null);
      const c = idle.pop();
      if (c) return Promise.resolve(c);
      return new Promise((resolve) => waiters.push(resolve));
    };
    const release = (c: Conn): void => {
      const w = waiters.shift();
      if (w) w(c);
      else idle.push(c);
    };
    stop.signal.addEventListener("abort", () => { for (const w of waiters.splice(0)) w(null); }, { once: true });

    const connect = async (c: Conn): Promise<pg.Client | null> => {
      if (c.client) return c.client;
      const client = new pg.Client({
        host: this.ctx.target.host,
        port: this.ctx.target.port,
        user: this.config.user ?? this.ctx.target.params.user ?? "postgres",
        database: this.config.database ?? this.ctx.target.params.database ?? "postgres",
        connectionTimeoutMillis: 10_000,
        application_name: `ingestbench-pg-copy-${this.ctx.genId}-${c.id}`,
      });
      client.on("error", () => { if (c.client === client) c.client = null; });
      try {
        await client.connect();
        c.client = client;
        return client;
      } catch (err) {
        await client.end().catch(() => undefined);
        failure(`connect ${this.ctx.target.host}:${this.ctx.target.port}: ${(err as Error).message}`);
        return null;
      }
    };

    const inflight = new Set<Promise<void>>();
    const copy = async (c: Conn, client: pg.Client, from: number, payload: Buffer, count: number, startMs: number): Promise<void> => {
      try {
        const stream = client.query(copyFrom(this.statement));
        const done = finished(stream);
        stream.end(payload);
        await done;
        if (stream.rowCount !== count) throw new Error(`COPY stored ${stream.rowCount} rows of ${count}`);
        totals.accepted += count;
        consecutiveFailures = 0;
      } catch (err) {
        totals.rejected += count;
        const last = rejectedRanges.at(-1);
        if (last && last[1] === from - 1) last[1] = from + count - 1;
        else rejectedRanges.push([from, from + count - 1]);
        failure(`COPY seqs ${from}..${from + count - 1}: ${(err as Error).message}`);
        // the connection may be broken: drop it, the next batch on this slot reconnects
        if (c.client === client) c.client = null;
        client.end().catch(() => undefined);
      } finally {
        hist.recordValue(Math.max(1, Math.round((nowMs() - startMs) * 1000)));
        release(c);
      }
    };

    const t0 = nowMs();
    let nextSeq = 0;
    // The next batch is encoded while the current one is in flight and re-stamped with sent_at when it is handed to
    // the transport, so a sequential client does not leave the link idle while it encodes. Seqs are taken only
    // here, in order, so the batches sent are a contiguous prefix (an encoded batch never sent is simply the last).
    let next: { from: number; payload: Buffer } | null = null;
    const encodeNext = async (): Promise<{ from: number; payload: Buffer }> => {
      const from = nextSeq;
      nextSeq += batch;
      await this.source.load(from, batch);
      return { from, payload: encodeCopyBatch(this.source, from, batch, new Date(0)) };
    };
    try {
      for (let k = 0; !stop.signal.aborted; ) {
        next ??= await encodeNext();
        const dueMs = rate === "max" ? 0 : t0 + (k * batch * 1000) / rate;
        if (rate !== "max") await sleep(dueMs - nowMs(), stop.signal);
        const c = await acquire();
        if (!c || stop.signal.aborted) {
          if (c) release(c);
          break;
        }
        const client = await connect(c);
        if (!client) {
          release(c);
          await sleep(Math.min(1000, 50 * consecutiveFailures), stop.signal); // back off; the batch is kept for later
          continue;
        }
        if (stop.signal.aborted) {
          release(c);
          break;
        }
        k++;
        const { from, payload } = next;
        next = null;
        restampSentAt(payload, new Date());
        const startMs = rate === "max" ? nowMs() : dueMs;
        totals.sent += batch;
        totals.bytes += payload.length;
        totals.requests++;
        const p = copy(c, client, from, payload, batch, startMs);
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
        if (!stop.signal.aborted) next = await encodeNext();
      }
      await Promise.all(inflight);
    } finally {
      clearInterval(progressTimer);
      signal.removeEventListener("abort", onAbort);
      await Promise.all(inflight).catch(() => undefined);
      const all = [...idle];
      await Promise.all(all.map((c) => c.client?.end().catch(() => undefined)));
      await this.source.close();
    }
    if (suppressedErrors > 0) errors.push(`(${suppressedErrors} more errors not listed)`);
    onProgress({ ...totals });
    const n = hist.totalCount;
    return {
      ...totals,
      genId: this.ctx.genId,
      rejectedRanges,
      latencyMs: {
        mean: n ? hist.mean / 1000 : 0,
        p50: n ? hist.getValueAtPercentile(50) / 1000 : 0,
        p99: n ? hist.getValueAtPercentile(99) / 1000 : 0,
        max: n ? hist.maxValue / 1000 : 0,
      },
      errors,
    };
  }
}

/** Factory "pg-copy": `create(config, ctx)` → Generator; ctx.target.params.table (default "ib_events"), user, database. */
export const pgCopy: GeneratorFactory<PgCopyConfig> = {
  name: "pg-copy",
  // the contract types the schema by its output; with defaults its input differs, hence the cast
  schema: pgCopySchema,
  create: (config, ctx) => new PgCopyGenerator(config, ctx),
};
