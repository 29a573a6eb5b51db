/**
 * The protocol-independent send loop every batch generator runs (pg-copy, and the HTTP/TCP protocols): connection
 * slots, seq assignment, open- or closed-loop pacing, latency, rejected ranges, failure stop, progress, graceful stop.
 *
 * - Seqs: one dispatcher takes seqs in order, so the seqs sent are always the contiguous prefix 0..sent-1 of this
 *   generator (rejected seqs included, listed in `rejectedRanges`). An encoded batch that is never sent is the last.
 * - Slots: `connections` connections, each with up to `pipelining` requests in flight (default 1; above 1 only for a
 *   transport whose connection answers its requests in order, HTTP/1.1 pipelining); every send has its own batch, so
 *   each answer maps to its own seqs. A failed send closes its connection (the transport's `close`; HTTP lets the
 *   other requests on it finish first) and the next batch on that slot opens a new one.
 * - rate "max": closed loop; batch k starts as soon as a slot is free; latency = send start → result.
 * - rate R events/s: open loop; batch k is due at t0 + k·batch/R; it waits for its due time and then for a free
 *   slot, and its latency is measured from the due time (coordinated-omission correction, Gil Tene: a slow receiver
 *   shows up as latency rather than as a quietly lower offered rate).
 * - The next batch is encoded while the current one is in flight, and `stamp`ed with sent_at when it is handed to
 *   the transport, so a sequential client does not leave the link idle while it encodes.
 * - A send that throws rejects its whole batch and drops its connection (the slot reconnects on next use); a send
 *   that resolves may reject single items (`rejectedSeqs`, e.g. bulk items with status 429 or 400). A batch with
 *   nothing accepted counts as a failure; after `maxConsecutiveFailures` failures in a row (connects or sends) the
 *   loop stops and reports the errors. A failed connect keeps its batch and backs off (50 ms × failures, ≤ 1 s).
 * - On `signal` abort: no new batch is started, in-flight sends finish, connections are closed, totals are final.
 * - `requests` N: a fixed workload (write-up 001's "batch × count": N requests of `batch` events); the loop ends by itself
 *   once N batches have been sent and answered.
 * - `duplicateEvery` k (fault injection): every k-th batch, once answered, is sent again on the same connection with
 *   the same bytes (same seqs, same sent_at), as a collector that retries an already delivered batch would. Those
 *   events count in `repeated` (and in bytes and requests), never in `sent`: the ledger must report them as
 *   duplicated, and throughput must not rise because of them.
 * Memory is flat: one encoded batch per request in flight plus one ahead, a fixed-size HDR histogram, a bounded error
 * list. A batch whose send resolved goes back to the encoder (`release`), which may encode a later batch into its
 * memory (core/events/encoding.ts BatchTemplate: no allocation or copy per batch).
 */
import * as hdr from "hdr-histogram-js";
import { z } from "zod";
import { latencySummaryMs } from "../stats/latency.ts";
import type { GeneratorFinal, GeneratorProgress } from "./types.ts";

/** Stop after this many failed requests (connects or sends) in a row. */
export const MAX_CONSECUTIVE_FAILURES = 10;
/** onProgress cadence, milliseconds. */
export const PROGRESS_INTERVAL_MS = 250;
/** Errors kept in the final report; later ones are counted in one summary line. */
export const MAX_ERRORS = 20;

/** zod fields every batch generator's config shares (spread them into a strict object; give `batch` a default). */
export const batchLoopFields = {
  /** events per batch (request) */
  batch: z.number().int().positive().max(10_000_000),
  /** concurrent connections, each with one batch in flight */
  connections: z.number().int().positive().max(1024).default(1),
  /** "max" (closed loop) or total events per second across connections (open loop) */
  rate: z.union([z.literal("max"), z.number().positive().finite()]).default("max"),
  seed: z.number().int().default(42),
  /** stop after this many requests (batches): a fixed workload, e.g. write-up 001's 10 × 1000; omitted = until stopped */
  requests: z.number().int().positive().optional(),
  /** fault injection: send every k-th batch twice (the second time after the first was answered); omitted = never */
  duplicateEvery: z.number().int().positive().optional(),
  /**
   * generator processes per entry point on the loadgen host (harness/runner/generator-group.ts splitConfig): the
   * rate and a fixed `requests` workload are split across them, each with its own genId (its own seq space); the
   * process itself ignores this field; omitted = 1
   */
  processes: z.number().int().positive().max(64).optional(),
};

/** An encoded batch of seqs [from, from + count); `payload.length` counts as bytes sent. */
export interface EncodedBatch {
  from: number;
  count: number;
  payload: Uint8Array;
  /** bytes of the batch's log lines (EventSource.logBytes; set by runSourceBatchLoop), counted as log bytes sent */
  logBytes?: number;
}

/** What a send achieved. accepted + rejectedSeqs.length must equal the batch's count. */
export interface SendResult {
  accepted: number;
  /** seqs (absolute, inside the batch) the receiver refused, in any order */
  rejectedSeqs?: number[];
  /** why items were refused (a few messages, e.g. the first bulk item error of each kind) */
  errors?: string[];
}

/** Sends encoded batches over connections of type C. Every method may throw (or reject). */
export interface BatchTransport<C, B extends EncodedBatch = EncodedBatch> {
  /** request noun for error messages, e.g. "COPY", "POST /_bulk" */
  readonly label: string;
  /** receiver address for error messages, e.g. "10.0.0.2:5432" */
  readonly address: string;
  /** open connection number `slot` (0..connections-1) */
  connect(slot: number): Promise<C>;
  /** false when the connection broke since the last send; the loop then closes it and reconnects */
  alive?(conn: C): boolean;
  /** send one batch and wait for the receiver's answer; throwing rejects the whole batch */
  send(conn: C, batch: B): Promise<SendResult>;
  close(conn: C): Promise<void>;
}

/** Encodes seq ranges; `stamp` writes the send time into an encoded batch just before it is sent. */
export interface BatchEncoder<B extends EncodedBatch = EncodedBatch> {
  encode(from: number, count: number): B | Promise<B>;
  stamp(batch: B, sentAt: Date): void;
  /**
   * The loop is done with `batch`: its send (and deliberate repeat) resolved, i.e. the receiver answered it, so the
   * payload was taken; the encoder may write a later batch into the same memory. Not called for a batch whose send
   * threw (a socket may still be writing it). (A receiver that answers before reading a whole body discards the rest
   * of it, so bytes rewritten under a late write are never read.)
   */
  release?(batch: B): void;
  /** release resources (e.g. a replay file) once the loop ends */
  close?(): Promise<void>;
  /** true when `encode` sets each batch's `logBytes`: the totals then carry GeneratorProgress.logBytes */
  readonly logBytes?: boolean;
}

/** An encoder over an event source's rows: `encode` reads rows already `load()`ed (see `runSourceBatchLoop`). */
export interface SourceBatchEncoder<B extends EncodedBatch = EncodedBatch> {
  encode(from: number, count: number): B;
  stamp(batch: B, sentAt: Date): void;
  /** see BatchEncoder.release */
  release?(batch: B): void;
}

/**
 * The part of an event source the loop drives: load a seq range before encoding it, close it at the end; the bytes of
 * a loaded range's log lines (core/events/source.ts EventSource.logBytes), when the source knows them.
 */
export interface LoadableSource {
  load(fromSeq: number, count: number): Promise<void>;
  close(): Promise<void>;
  logBytes?(fromSeq: number, count: number): number;
}

export interface BatchLoopOptions {
  /** events per batch (request) */
  batch: number;
  /** connections, each with at most `pipelining` batches in flight */
  connections: number;
  /** requests in flight per connection (see the file comment); default 1 */
  pipelining?: number;
  /** "max" (closed loop) or total events per second across slots (open loop) */
  rate: "max" | number;
  /** abort to stop gracefully */
  signal: AbortSignal;
  /** called every `progressIntervalMs` and once at the end with running totals */
  onProgress: (p: GeneratorProgress) => void;
  genId: number;
  /** end after this many batches (see the file comment); undefined = until `signal` aborts */
  requests?: number;
  /** re-send every k-th batch once it was answered (fault injection, see the file comment) */
  duplicateEvery?: number;
  maxConsecutiveFailures?: number;
  progressIntervalMs?: number;
}

const nowMs = (): number => performance.now();

/** An abortable sleep that resolves (never rejects) at `ms` from now or on abort. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Sorted, merged, inclusive seq ranges. */
export class RangeSet {
  readonly ranges: Array<[number, number]> = [];

  /** Add [from, to] (inclusive), merging with neighbours. */
  add(from: number, to: number): void {
    const r = this.ranges;
    const last = r.at(-1);
    if (!last || from > last[1] + 1) {
      r.push([from, to]);
      return;
    } // common case: appending in order
    if (from >= last[0]) {
      last[1] = Math.max(last[1], to);
      return;
    }
    // general case: insert, then merge overlapping/adjacent ranges
    let i = r.findIndex((x) => x[0] > from);
    if (i < 0) i = r.length;
    r.splice(i, 0, [from, to]);
    const merged: Array<[number, number]> = [];
    for (const x of r) {
      const m = merged.at(-1);
      if (m && x[0] <= m[1] + 1) m[1] = Math.max(m[1], x[1]);
      else merged.push([x[0], x[1]]);
    }
    r.splice(0, r.length, ...merged);
  }

  /** Add single seqs (any order); consecutive ones become one range. */
  addSeqs(seqs: readonly number[]): void {
    const s = [...seqs].sort((a, b) => a - b);
    for (let i = 0; i < s.length;) {
      let j = i;
      while (j + 1 < s.length && s[j + 1]! <= s[j]! + 1) j++;
      this.add(s[i]!, s[j]!);
      i = j + 1;
    }
  }
}

interface Slot<C> {
  id: number;
  conn: C | null;
}

/**
 * Run the batch loop until `opts.signal` aborts or too many consecutive failures, then resolve with the final
 * report (seqs 0..sent-1; `rejectedRanges` sorted and merged; latency in ms from an HDR histogram of µs values,
 * 1 µs .. 1 h at 3 significant digits, percentiles capped at the recorded maximum). Never rejects for send or
 * connect errors (they are counted and listed); rejects only when the encoder throws.
 */
export async function runBatchLoop<C, B extends EncodedBatch>(
  opts: BatchLoopOptions,
  transport: BatchTransport<C, B>,
  encoder: BatchEncoder<B>,
): Promise<GeneratorFinal> {
  const { batch, rate, signal, onProgress } = opts;
  const maxFailures = opts.maxConsecutiveFailures ?? MAX_CONSECUTIVE_FAILURES;
  const totals: GeneratorProgress = {
    sent: 0,
    accepted: 0,
    rejected: 0,
    bytes: 0,
    requests: 0,
    repeated: 0,
    ...(encoder.logBytes ? { logBytes: 0 } : {}),
  };
  const rejected = new RangeSet();
  const errors: string[] = [];
  let suppressedErrors = 0;
  let consecutiveFailures = 0;
  // latency in microseconds, 1 µs .. 1 h at 3 significant digits: fixed memory
  const hist = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
    useWebAssembly: false,
  });
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
    if (consecutiveFailures >= maxFailures && !stop.signal.aborted) {
      noteError(`stopped after ${consecutiveFailures} consecutive failures`);
      stop.abort();
    }
  };

  const progressTimer = setInterval(
    () => onProgress({ ...totals }),
    opts.progressIntervalMs ?? PROGRESS_INTERVAL_MS,
  );
  progressTimer.unref?.();

  // Connection slots: idle ones (a connection once per free request place on it) and waiters for one.
  const slots: Array<Slot<C>> = [];
  const idle: Array<Slot<C>> = [];
  const waiters: Array<(s: Slot<C> | null) => void> = [];
  for (let i = 0; i < opts.connections; i++) slots.push({ id: i, conn: null });
  // idle.pop() takes every connection's first place before any connection's second
  for (let d = 0; d < (opts.pipelining ?? 1); d++) idle.push(...slots);
  const acquire = (): Promise<Slot<C> | null> => {
    if (stop.signal.aborted) return Promise.resolve(null);
    const s = idle.pop();
    if (s) return Promise.resolve(s);
    return new Promise((resolve) => waiters.push(resolve));
  };
  const release = (s: Slot<C>): void => {
    const w = waiters.shift();
    if (w) w(s);
    else idle.push(s);
  };
  stop.signal.addEventListener(
    "abort",
    () => {
      for (const w of waiters.splice(0)) w(null);
    },
    { once: true },
  );

  const drop = (s: Slot<C>): void => {
    const c = s.conn;
    s.conn = null;
    if (c !== null) transport.close(c).catch(() => undefined);
  };

  const connect = async (s: Slot<C>): Promise<C | null> => {
    if (s.conn !== null && transport.alive && !transport.alive(s.conn)) drop(s);
    if (s.conn !== null) return s.conn;
    try {
      s.conn = await transport.connect(s.id);
      return s.conn;
    } catch (err) {
      failure(`connect ${transport.address}: ${(err as Error).message}`);
      return null;
    }
  };

  const rejectRange = (from: number, count: number): void => {
    totals.rejected += count;
    rejected.add(from, from + count - 1);
  };

  const inflight = new Set<Promise<void>>();
  const send = async (s: Slot<C>, conn: C, b: B, startMs: number, repeat: boolean): Promise<void> => {
    const { from, count } = b;
    const what = `${transport.label} seqs ${from}..${from + count - 1}`;
    try {
      const r = await transport.send(conn, b);
      let done = true; // the transport holds none of b's bytes (see BatchEncoder.release)
      if (repeat && r.accepted > 0) {
        // the slot is still held, so the encoder has not reused this batch's buffer: the bytes are the same
        totals.bytes += b.payload.length;
        if (totals.logBytes !== undefined) totals.logBytes += b.logBytes ?? 0;
        totals.requests++;
        const again = await transport.send(conn, b).catch((err: Error) => {
          noteError(`${what}: deliberate repeat failed: ${err.message}`);
          done = false;
          return null;
        });
        totals.repeated = (totals.repeated ?? 0) + (again?.accepted ?? 0);
      }
      const items = r.rejectedSeqs ?? [];
      if (r.accepted + items.length !== count || items.some((q) => q < from || q >= from + count)) {
        throw new Error(
          `receiver answered ${r.accepted} accepted + ${items.length} rejected items for a batch of ${count}`,
        );
      }
      totals.accepted += r.accepted;
      if (items.length > 0) {
        totals.rejected += items.length;
        rejected.addSeqs(items);
      }
      if (r.accepted === 0 && count > 0)
        failure(`${what}: all ${count} items rejected${r.errors?.length ? `: ${r.errors.join("; ")}` : ""}`);
      else {
        consecutiveFailures = 0;
        if (items.length > 0)
          noteError(
            `${what}: ${items.length} items rejected${r.errors?.length ? `: ${r.errors.join("; ")}` : ""}`,
          );
      }
      if (done) encoder.release?.(b);
    } catch (err) {
      rejectRange(from, count);
      failure(`${what}: ${(err as Error).message}`);
      // the connection may be broken: drop it, the next batch on this slot reconnects
      if (s.conn === conn) drop(s);
    } finally {
      hist.recordValue(Math.max(1, Math.round((nowMs() - startMs) * 1000)));
      release(s);
    }
  };

  const t0 = nowMs();
  let nextSeq = 0;
  let next: B | null = null;
  const encodeNext = async (): Promise<B> => {
    const from = nextSeq;
    nextSeq += batch;
    return encoder.encode(from, batch);
  };
  try {
    for (let k = 0; !stop.signal.aborted && (opts.requests === undefined || k < opts.requests);) {
      // Yield to the event loop once per batch: with a transport whose sends complete at once (a fast TCP socket),
      // awaiting resolved promises runs only microtasks, and timers, signals and stdin would never get a turn.
      await new Promise<void>((resolve) => setImmediate(resolve));
      next ??= await encodeNext();
      const dueMs = rate === "max" ? 0 : t0 + (k * batch * 1000) / rate;
      if (rate !== "max") await sleep(dueMs - nowMs(), stop.signal);
      const s = await acquire();
      if (!s || stop.signal.aborted) {
        if (s) release(s);
        break;
      }
      const conn = await connect(s);
      if (conn === null) {
        release(s);
        await sleep(Math.min(1000, 50 * consecutiveFailures), stop.signal); // back off; the batch is kept for later
        continue;
      }
      if (stop.signal.aborted) {
        release(s);
        break;
      }
      k++;
      const b: B = next;
      next = null;
      encoder.stamp(b, new Date());
      const startMs = rate === "max" ? nowMs() : dueMs;
      totals.sent += b.count;
      totals.bytes += b.payload.length;
      if (totals.logBytes !== undefined) totals.logBytes += b.logBytes ?? 0;
      totals.requests++;
      const p = send(s, conn, b, startMs, opts.duplicateEvery !== undefined && k % opts.duplicateEvery === 0);
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      if (!stop.signal.aborted && (opts.requests === undefined || k < opts.requests))
        next = await encodeNext();
    }
    await Promise.all(inflight);
  } finally {
    clearInterval(progressTimer);
    signal.removeEventListener("abort", onAbort);
    await Promise.all(inflight).catch(() => undefined);
    await Promise.all(
      slots.map(async (s) => {
        const c = s.conn;
        s.conn = null;
        if (c !== null) await transport.close(c).catch(() => undefined);
      }),
    );
    await encoder.close?.();
  }
  if (suppressedErrors > 0) errors.push(`(${suppressedErrors} more errors not listed)`);
  onProgress({ ...totals });
  return {
    ...totals,
    genId: opts.genId,
    rejectedRanges: rejected.ranges,
    latencyMs: hist.totalCount ? latencySummaryMs(hist) : { mean: 0, p50: 0, p99: 0, max: 0 },
    errors,
  };
}

/**
 * `runBatchLoop` for a generator over an event source and an encoder: each seq range is `load()`ed from the source
 * (replay files) and then encoded, `stamp` writes sent_at, and the source is closed when the loop ends. Pacing and
 * connections come from the generator's config (`batch`, `connections`, `rate`).
 */
export function runSourceBatchLoop<C, B extends EncodedBatch>(
  config: Pick<
    BatchLoopOptions,
    "batch" | "connections" | "pipelining" | "rate" | "requests" | "duplicateEvery"
  >,
  run: Pick<BatchLoopOptions, "signal" | "onProgress" | "genId">,
  transport: BatchTransport<C, B>,
  source: LoadableSource,
  encoder: SourceBatchEncoder<B>,
): Promise<GeneratorFinal> {
  const { batch, connections, pipelining, rate, requests, duplicateEvery } = config;
  return runBatchLoop({ batch, connections, pipelining, rate, requests, duplicateEvery, ...run }, transport, {
    encode: async (from, count) => {
      await source.load(from, count);
      const b = encoder.encode(from, count);
      if (source.logBytes) b.logBytes = source.logBytes(from, count);
      return b;
    },
    logBytes: source.logBytes !== undefined,
    stamp: (b, sentAt) => encoder.stamp(b, sentAt),
    release: (b) => encoder.release?.(b),
    close: () => source.close(),
  });
}
