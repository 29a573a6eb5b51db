/**
 * Ledger arithmetic shared by every verifier (docs/design.md, "Rules for the numbers"; Ledger in ./verifier.ts). For generator g with
 * sent[g] seqs 0..sent[g]-1 and its rejected ranges:
 * - rejected: seqs inside g's rejected ranges (clamped to 0..sent[g]-1, overlaps merged), stored or not
 * - accepted = sent − rejected
 * - stored = rows (documents, lines) at the sink; distinct = distinct (gen, seq) among them; duplicated = stored − distinct
 * - unexpected = stored rows whose gen is unknown or whose seq is outside 0..sent[gen]-1
 * - lost = accepted seqs absent at the sink
 * - missingRanges = the first MAX_MISSING_RANGES runs of lost seqs, [gen, from, to] inclusive, by gen then from
 * - overwritten = what the sink's own account says (an upsert on a key); the arithmetic here cannot see it
 * - foreign = rows whose gen lies outside this run's generator-id space (see "Run identity"): counted apart and in
 *   none of the figures above (not stored, not duplicated, not unexpected), so never throughput
 * - rejectedStored = distinct rejected seqs present at the sink all the same
 * - overwritten / deduplicated, from what was sent (`SinkCollisions`): where the sink keeps one row per key (GridDB
 *   TIME_SERIES: the row key), an accepted seq that is absent while another sent seq with the same key is present
 *   was replaced (an upsert: overwritten) or dropped as a repeat (deduplicated), not lost; when no seq of a key is
 *   present, all of that key's seqs are lost (the sink's row for it is gone, whichever seq wrote it last)
 *
 * Run identity: every run has its own generator-id space, GEN_STRIDE ids from `genBaseOf(runId)`; generator i stamps
 * gen = genBase + i in every event (core/events/source.ts), so every sink column and every collector's rendering
 * carries it with no column of its own. A row flushed late by the previous replicate's collector has another run's gen.
 * Verifiers take `genBase` from their context; ledgers and missing ranges speak of generator indexes 0..n-1.
 *
 * Seq completion: a drain or a fixed workload is complete when no acknowledged seq is missing at the sink (the
 * verifier's missing-range query, `Verifier.missing`, or its ledger's `lost`): counts alone cannot tell one lost row
 * and one duplicate from a complete run.
 * The clickhouse verifier computes the counts at the sink and uses `normalizeRanges` and `GapCollector`; the postgres
 * verifier streams every stored (gen, seq) to the harness in one scan into `LedgerScan` (./ledger-scan.ts: one bit per
 * sent seq, SQL's NULL semantics); the HTTP verifiers (elasticsearch, loki, griddb) page the stored (gen, seq) set to
 * the harness and feed `SeqLedger`, which holds one byte per sent seq (10 million seqs: 10 MB).
 */
import type { Ledger } from "./verifier.ts";

/** How many missing ranges a ledger lists. */
export const MAX_MISSING_RANGES = 20;

/** Generator ids per run: a run has at most this many generators (genBase .. genBase + GEN_STRIDE − 1). */
export const GEN_STRIDE = 256;

/**
 * The first generator id of a run: (fmix32 of the run id's FNV-1a hash mod (2^23 − 1) + 1) × GEN_STRIDE, so ≥ 256
 * (gens 0..255 are nobody's run: rows of tools and older runs are foreign) and genBase + 255 ≤ 2^31 − 1 (fits the
 * int32 gen columns of PostgreSQL `integer` and GridDB INTEGER). Two runs share a space with probability 2^-23.
 */
export function genBaseOf(runId: string): number {
  let h = 0x811c9dc5; // FNV-1a 32-bit offset basis
  for (let i = 0; i < runId.length; i++) h = Math.imul(h ^ runId.charCodeAt(i), 0x01000193);
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16; // fmix32
  return (((h >>> 0) % (2 ** 23 - 1)) + 1) * GEN_STRIDE;
}

/** A sink's key of a sent row, recomputed from what was sent; `as` names what a collision is called. */
export interface SinkCollisions {
  /** the key of generator index `gen`'s row `seq` (equal keys: one row at the sink) */
  keyOf: (gen: number, seq: number) => string | number;
  as: "overwritten" | "deduplicated";
}

/** True when `gen` belongs to the run whose space starts at `genBase`. */
export function inRunSpace(gen: number, genBase: number): boolean {
  return gen >= genBase && gen < genBase + GEN_STRIDE;
}

/** Merge and clamp rejected ranges of one generator to [0, sent-1]; returns sorted disjoint inclusive ranges. */
export function normalizeRanges(ranges: ReadonlyArray<readonly [number, number]>, sent: number): Array<[number, number]> {
  const r = ranges
    .map(([a, b]) => [Math.max(0, Math.min(a, b)), Math.min(sent - 1, Math.max(a, b))] as [number, number])
    .filter(([a, b]) => a <= b)
    .sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of r) {
    const last = out.at(-1);
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** Collects missing ranges [gen, from, to] in order, merging adjacent seqs; `closed` counts finished ranges. */
export class GapCollector {
  readonly ranges: Array<[number, number, number]> = [];
  private open: [number, number, number] | null = null;
  missing(gen: number, from: number, to: number): void {
    const o = this.open;
    if (o && o[0] === gen && o[2] === from - 1) o[2] = to;
    else {
      this.close();
      this.open = [gen, from, to];
    }
  }
  close(): void {
    if (this.open) this.ranges.push(this.open);
    this.open = null;
  }
  get closed(): number {
    return this.ranges.length;
  }
}

/** Sent, accepted and rejected totals of `sent` and `rejected`, with each generator's merged rejected ranges. */
export function sentTotals(sent: readonly number[], rejected: ReadonlyArray<ReadonlyArray<readonly [number, number]>>): { sent: number; accepted: number; rejected: number; ranges: Array<Array<[number, number]>> } {
  let s = 0;
  let r = 0;
  const ranges = sent.map((n, g) => {
    const rs = normalizeRanges(rejected[g] ?? [], n);
    s += n;
    for (const [a, b] of rs) r += b - a + 1;
    return rs;
  });
  return { sent: s, accepted: s - r, rejected: r, ranges };
}

/**
 * An exact ledger built in the harness from the stored (gen, seq) pairs, fed in any order and in pages (`add`).
 * Memory: one byte per sent seq, plus a set of the (rare) unexpected pairs.
 */
export class SeqLedger {
  private readonly present: Uint8Array[];
  private readonly unexpectedPairs = new Set<string>();
  private stored = 0;
  private distinct = 0;
  private unexpected = 0;
  private foreign = 0;

  /**
   * `genBase`: this run's first generator id (stored gens are genBase + index; outside the space they are foreign).
   * @throws RangeError when a sent count is not a non-negative safe integer
   */
  constructor(private readonly sent: readonly number[], private readonly rejected: ReadonlyArray<ReadonlyArray<readonly [number, number]>>, private readonly genBase = 0) {
    for (const n of sent) if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`bad sent count ${n}`);
    this.present = sent.map((n) => new Uint8Array(n));
  }

  /** `copies` stored rows of (gen, seq) (a composite bucket's doc_count, a GROUP BY count, or 1 per row). */
  add(gen: number, seq: number, copies = 1): void {
    if (copies <= 0) return;
    if (Number.isSafeInteger(gen) && !inRunSpace(gen, this.genBase)) {
      this.foreign += copies;
      return;
    }
    this.stored += copies;
    const p = Number.isSafeInteger(gen) ? this.present[gen - this.genBase] : undefined;
    if (p === undefined || !Number.isSafeInteger(seq) || seq < 0 || seq >= p.length) {
      this.unexpected += copies;
      const key = `${gen}-${seq}`;
      if (!this.unexpectedPairs.has(key)) {
        this.unexpectedPairs.add(key);
        this.distinct++;
      }
      return;
    }
    if (p[seq] === 0) {
      p[seq] = 1;
      this.distinct++;
    }
  }

  /** `n` stored rows without a readable gen or seq: unexpected, each counted as distinct (they cannot be matched). */
  addUnkeyed(n: number): void {
    if (n <= 0) return;
    this.stored += n;
    this.unexpected += n;
    this.distinct += n;
  }

  /**
   * The ledger (definitions in the file comment); `overwritten` from the sink's own account, `deduplicated` from what
   * was sent (`collidingSeqs`), both default 0.
   */
  result(overwritten = 0, deduplicated = 0, collisions?: SinkCollisions): Ledger {
    const t = sentTotals(this.sent, this.rejected);
    // keys held by a present seq (SinkCollisions); computed only for sinks that keep one row per key
    const held = new Set<string | number>();
    if (collisions) this.present.forEach((p, g) => { for (let seq = 0; seq < p.length; seq++) if (p[seq] === 1) held.add(collisions.keyOf(g, seq)); });
    let collided = 0;
    const gaps = new GapCollector();
    let lost = 0;
    let rejectedStored = 0;
    this.present.forEach((p, g) => {
      const rej = t.ranges[g]!;
      let k = 0;
      for (let seq = 0; seq < p.length; seq++) {
        while (k < rej.length && rej[k]![1] < seq) k++;
        const isRejected = k < rej.length && rej[k]![0] <= seq;
        if (isRejected && p[seq] === 1) rejectedStored++;
        if (p[seq] === 1 || isRejected) {
          gaps.close();
          continue;
        }
        if (collisions && held.has(collisions.keyOf(g, seq))) {
          collided++;
          gaps.close();
          continue;
        }
        lost++;
        if (gaps.closed < MAX_MISSING_RANGES) gaps.missing(g, seq, seq);
      }
      gaps.close(); // a gap ends at sent[g]
    });
    return {
      sent: t.sent,
      accepted: t.accepted,
      stored: this.stored,
      distinct: this.distinct,
      lost,
      duplicated: this.stored - this.distinct,
      overwritten: overwritten + (collisions?.as === "overwritten" ? collided : 0),
      rejected: t.rejected,
      unexpected: this.unexpected,
      missingRanges: gaps.ranges.slice(0, MAX_MISSING_RANGES),
      foreign: this.foreign,
      rejectedStored,
      deduplicated: deduplicated + (collisions?.as === "deduplicated" ? collided : 0),
    };
  }
}
