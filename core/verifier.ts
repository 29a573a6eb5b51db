/**
 * Verifier contract: the sink-side half. Runs in the harness process and talks to the sink over the control link.
 */
import type { EventField } from "./events/types.ts";
import type { FidelityResult, StoredRowReader } from "./fidelity.ts";

export interface VerifierContext {
  /** address and port of the sink as reachable from the harness (control link) */
  host: string;
  port: number;
  params: Record<string, string>;
  fields: EventField[];
  /**
   * This run's generator-id space (core/ledger.ts, "Run identity"): generator i stamps gen = genBase + i, and rows whose
   * gen lies outside [genBase, genBase + GEN_STRIDE) belong to another run (`foreign`). Default 0 (gens 0..n-1).
   */
  genBase?: number;
  /**
   * the generators' seed (core/events/source.ts), when the run's rows are seeded: lets a verifier recompute what was
   * sent (e.g. GridDB's TIME_SERIES row keys, core/ledger.ts SinkCollisions)
   */
  seed?: number;
}

/** One timed count. tBefore/tAfter are epoch milliseconds (performance.timeOrigin + performance.now()) around the query. */
export interface CountSample {
  tBefore: number;
  tAfter: number;
  stored: number;
  /** newest sent_at among stored rows, epoch ms, or null when empty */
  newestSentAtMs: number | null;
  /**
   * delivery latency (stored_at − sent_at) of the rows that became visible since the previous sample, where the
   * verifier reads it (the sink's own stored-at column); absent: the verifier has none (`Verifier.deliveryUnavailable`)
   */
  delivery?: DeliveryWindow;
  /**
   * what the sink's state was at this sample, for a verifier that settles its samples after the load
   * (`Verifier.afterLoad`): opaque to the runner (PostgreSQL: the count's snapshot; ClickHouse: the server's clock)
   */
  mark?: string;
}

/**
 * Delivery latencies of the rows one sample read, as a histogram computed at the sink: every row counted once over
 * a run's samples (each verifier says how it reads only the rows new since its previous sample).
 */
export interface DeliveryWindow {
  /** [latency in whole milliseconds (stored_at − sent_at, on the sink's clock minus the generator's), rows] */
  buckets: Array<[number, number]>;
  /** resolution of the sink's stored-at column, ms (1: PostgreSQL; 1000: ClickHouse 18.16's DateTime) */
  resolutionMs: number;
  /** rows read without a stored-at value (a writer that bypassed the column's default): in no bucket */
  unstamped: number;
}

/** Verifier.afterLoad's answer: per sample, the figures that replace the live ones (absent: the live one stands). */
export interface SettledSamples {
  samples: Array<{
    /** this run's rows stored (visible) at the sample */
    stored?: number;
    /** newest sent_at among them, epoch ms, or null when none */
    newestSentAtMs?: number | null;
    /** delivery latency of the rows that became visible since the previous sample */
    delivery?: DeliveryWindow;
  }>;
  /** delivery latency of the rows that became visible after the last sample */
  later?: DeliveryWindow;
  /**
   * every row of this run visible to the settling's own snapshot, exact, as a `full` sample would count them then
   * (tBefore/tAfter: around the statement that took the snapshot), where the settling read every row anyway
   * (PostgreSQL): a fixed workload's last point takes it instead of a full count of its own (harness/runner/run.ts)
   */
  final?: CountSample;
  /**
   * settled from the rows of the completion check's pass, in its snapshot (Verifier.missing given the marks:
   * PostgreSQL), not by a pass of its own; absent otherwise
   */
  fromCompletionPass?: boolean;
}

/** The integrity account of a run (docs/design.md, "Rules for the numbers"). */
export interface Ledger {
  sent: number;
  accepted: number;
  stored: number;
  distinct: number;
  lost: number;
  duplicated: number;
  overwritten: number;
  rejected: number;
  /** stored rows whose seq was never sent (stored > sent is a failure) */
  unexpected: number;
  /** first missing seq ranges, inclusive, per generator: [gen, from, to] (gen = the generator's index 0..n-1) */
  missingRanges: Array<[number, number, number]>;
  /** rows of another run (gen outside this run's generator-id space): in none of the counts above, never throughput */
  foreign?: number;
  /** distinct rejected seqs that are stored all the same (the receiver refused the batch yet kept some rows) */
  rejectedStored?: number;
  /** sent seqs the sink keeps under one key with another sent seq and drops or ignores (not lost; core/ledger.ts) */
  deduplicated?: number;
  /**
   * stored rows whose content differs from what the generator sent for their (gen, seq) (core/fidelity.ts); absent
   * when the sink's verifier cannot read rows back (then `fidelity` says so)
   */
  altered?: number;
  /** the content check behind `altered`: mode, sizes, rules per field, first examples (core/fidelity.ts) */
  fidelity?: FidelityResult | { unavailable: string };
  /**
   * present when no generator process knew what was sent (`generator: none`, core/plugin.ts SelfLoad): `sent` is
   * inferred from the collector's own count of the events it made and the seq range 0 .. made − 1 per generator
   */
  inferred?: InferredSent;
}

/** How a ledger's `sent` was inferred (Ledger.inferred). */
export interface InferredSent {
  /** "collector": from the collector's own counter, not from a generator's report */
  from: "collector";
  /** the collector and its input that made the events, e.g. "syslog-ng example-msg-generator()" */
  by: string;
  /** where the count was read, e.g. "syslog-ng-ctl stats: source s_gen processed" */
  counter: string;
  /** made events per generator index (the ledger's sent per gen: seqs 0 .. made − 1) */
  made: number[];
  /**
   * the seq range check: stored rows whose seq lies outside 0 .. made − 1 (the ledger's `unexpected`); 0 means every
   * stored seq is inside the counted range, so the counter did not undercount what reached the sink
   */
  outsideRange: number;
}

/**
 * A timed missing-range query (core/ledger.ts, "Seq completion"): which acknowledged seqs are not at the sink yet.
 * tBefore/tAfter as in CountSample, around the query (or queries) that answered it.
 */
export interface Completion {
  tBefore: number;
  tAfter: number;
  /** acknowledged (sent, not rejected) seqs absent at the sink */
  missing: number;
  /** first MAX_MISSING_RANGES ranges of them, [gen, from, to] inclusive, gen the generator's index */
  missingRanges: Array<[number, number, number]>;
  /**
   * every row of this run the check saw (duplicates and unexpected seqs included), where the check counts them as it
   * reads (PostgreSQL's scan): exact when a live count lags (Verifier.liveCountLags); absent elsewhere
   */
  stored?: number;
  /**
   * Bytes the sink wrote to its write-ahead log while the check ran, read-only as the check is (PostgreSQL:
   * pg_current_wal_insert_lsn() before and after, pg_wal_lsn_diff; anything else writing meanwhile counts too). Absent where
   * the sink has no such figure. A first pass over freshly loaded rows sets their hint bits, which with data checksums
   * on logs a full-page image per page (docs/design.md, "What the instrument costs").
   */
  walBytes?: number;
}

/**
 * What the verifier's own queries cost the sink, over the samples taken with one `tag` (e.g. the measurement phase),
 * as the sink itself accounts for them where it can (ClickHouse: system.query_log's ProfileEvents per query).
 */
export interface SinkCost {
  /** the queries counted */
  queries: number;
  /** CPU time the sink's threads spent on them (user + system), ms; null where the sink does not say */
  cpuMs: number | null;
  /** wall time of the sink's threads on them, ms (an upper bound of their CPU time per thread); null where unknown */
  threadWallMs: number | null;
  /** rows the sink read for them; null where the sink does not say */
  readRows: number | null;
  /** where the figures come from, e.g. "system.query_log ProfileEvents (UserTimeMicroseconds + SystemTimeMicroseconds)" */
  source: string;
}

/** How a ledger read the sink (Verifier.ledgerPass; run.json instrument.overhead.ledgerPass). */
export interface LedgerPass {
  /** the completion check's last pass taken as the ledger's: no pass of its own */
  tookCompletionPass: boolean;
  /** in words: the pass, and why not the completion check's when not */
  detail: string;
}

export interface Verifier {
  /** create the schema (table/index/container) from the scenario's fields */
  prepare(): Promise<void>;
  /**
   * a timed count of stored rows; `full` asks for a count of every row even where the verifier counts incrementally;
   * `tag` labels the sample's queries for `sinkCost` (the runner passes the phase)
   */
  sample(options?: { full?: boolean; tag?: string }): Promise<CountSample>;
  /**
   * true where a live sample's count can stand still below the rows committed for seconds: PostgreSQL's insert
   * counter, which a writer reports when a transaction ends at most once a second, and an idle one only 10 s after
   * its last report (PostgreSQL's pgstat_report_stat, PGSTAT_IDLE_INTERVAL). The completion wait then runs its check
   * once the count has stood still (harness/runner/completion.ts), rather than waiting for the count to reach what
   * was acknowledged.
   */
  readonly liveCountLags?: boolean;
  /** what the samples tagged `tag` cost the sink (SinkCost); absent: the sink keeps no per-query account */
  sinkCost?(tag: string): Promise<SinkCost>;
  /** exact account given what each generator sent (sent[genId] = number of seqs 0..n-1) and rejected ranges */
  ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger>;
  /**
   * The missing-range query: cheaper than `ledger` where the sink can answer it at the sink (PostgreSQL, ClickHouse).
   * Optional; `completionOf` falls back to `ledger`. `marks`: the samples' marks so far, as `afterLoad` would get
   * them; a verifier may settle them in the check's own pass and snapshot, and answer the next `afterLoad` with the
   * same marks from it (SettledSamples.fromCompletionPass).
   */
  missing?(sent: number[], rejected: Array<Array<[number, number]>>, marks?: string[]): Promise<Completion>;
  /**
   * How the last `ledger` read the sink, in words (PostgreSQL: its own pass of the table, or the completion check's
   * last pass taken as it was, and why not); absent where a ledger has one way only
   */
  readonly ledgerPass?: LedgerPass;
  /** reads stored rows back for the content check (core/fidelity.ts); absent: the sink cannot, and the result says so */
  rows?: StoredRowReader;
  /**
   * why this sink's samples carry no delivery latency (CountSample.delivery), e.g. "Loki's push API keeps no receive
   * time"; absent when its samples carry one
   */
  readonly deliveryUnavailable?: string;
  /**
   * Settle the samples once the load is over, where measuring per sample would cost the capped sink more than it may
   * (the query then burdens no measured window): `marks` are the samples' CountSample.mark in order; answer i is what
   * sample i should have said, `later` the delivery window of the rows that arrived after the last sample. Each
   * verifier says what its live samples carry meanwhile (plugins/sinks/postgres/verifier.ts: an estimate).
   */
  afterLoad?(marks: string[]): Promise<SettledSamples>;
  /**
   * The sink's control endpoint moved (a restarted container published its port anew: harness/runner/run.ts asks
   * the site after a fault disturbed the sink): every later query goes to `at`, an open connection to the old one is
   * dropped; the verifier's own state (counting frontier, delivery cursor, costs) is kept. Absent: the endpoint
   * cannot move under this verifier (the run keeps the old one).
   */
  retarget?(at: { host: string; port: number }): void;
  /**
   * What the table or index takes on the sink's disk now, after the ledger (the run's rows only where the sink can
   * tell them apart; otherwise the whole table, which the run created); absent: the sink cannot say
   */
  storage?(): Promise<StorageFootprint>;
  close(): Promise<void>;
}

/** A sink's own account of what a table or index takes on disk. */
export interface StorageFootprint {
  /** bytes on disk, e.g. PostgreSQL's pg_total_relation_size (heap, indexes, TOAST), ClickHouse's bytes_on_disk */
  bytes: number;
  /** the same rows uncompressed, where the sink keeps the figure (ClickHouse's data_uncompressed_bytes) */
  uncompressedBytes?: number;
  /** how the sink was asked, in words (the query), for run.json */
  source: string;
}

export interface VerifierFactory {
  name: string;
  create(ctx: VerifierContext): Verifier;
}

const nowMs = (): number => performance.timeOrigin + performance.now();

/** The verifier's missing-range query (given the samples' `marks`, Verifier.missing), or its ledger's lost seqs where it has none; timed. */
export async function completionOf(
  v: Verifier,
  sent: number[],
  rejected: Array<Array<[number, number]>>,
  marks?: string[],
): Promise<Completion> {
  if (v.missing) return v.missing(sent, rejected, marks);
  const tBefore = nowMs();
  const l = await v.ledger(sent, rejected);
  return { tBefore, tAfter: nowMs(), missing: l.lost, missingRanges: l.missingRanges };
}

/** The least horizon of a windowed live sample, ms (plugins/sinks/loki/verifier.ts, plugins/sinks/griddb/verifier.ts). */
export const LIVE_HORIZON_MS = 60_000;

/** The most horizon of a windowed live sample, ms: bounds what a sample reads while delivery stalls. */
export const LIVE_HORIZON_MAX_MS = 3_600_000;

/**
 * The horizon of a windowed live sample, ms, given the newest stored row's age (now − its send time, ms): twice the
 * age, within [LIVE_HORIZON_MS, LIVE_HORIZON_MAX_MS]. A sink whose live count cannot be incremental (Loki, GridDB)
 * re-counts only rows sent within the horizon and freezes the older ones at their last count: the age grows while
 * delivery stalls, so late rows are waited for, and the margin covers the generator's clock against the harness's.
 */
export function liveHorizonMs(ageMs: number): number {
  return Math.min(LIVE_HORIZON_MAX_MS, Math.max(LIVE_HORIZON_MS, 2 * Math.max(0, ageMs)));
}
