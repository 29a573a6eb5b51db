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
 * the harness and feed `SeqLedger`, which holds one bit per sent seq too (SeqBits, below), in chunks freed as they fill
 * (322 million seqs: at most 40 MB; pages in seq order keep about one 128 KiB chunk per generator).
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
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16; // fmix32
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
export function normalizeRanges(
  ranges: ReadonlyArray<readonly [number, number]>,
  sent: number,
): Array<[number, number]> {
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
export function sentTotals(
  sent: readonly number[],
  rejected: ReadonlyArray<ReadonlyArray<readonly [number, number]>>,
): { sent: number; accepted: number; rejected: number; ranges: Array<Array<[number, number]>> } {
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

/** The popcount of a 32-bit word (Hacker's Delight, 5-2). */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Seqs per chunk of SeqBits (128 KiB of bits). */
const CHUNK_BITS = 2 ** 20;
const CHUNK_WORDS = CHUNK_BITS / 32;

/**
 * A bit per seq 0..n-1 in chunks of CHUNK_BITS: a chunk is allocated when a first bit of its is set, and replaced by
 * "full" once every one of its bits (below n) is set, so that bits set in about ascending order hold a few chunks.
 */
export class SeqBits {
  private readonly chunks: Array<Uint32Array | null | "full">;
  private readonly counts: Float64Array;
  /** the last chunk that became full, kept to be the next one allocated (not left to the garbage collector) */
  private spare: Uint32Array | null = null;

  constructor(readonly n: number) {
    const chunks = Math.ceil(n / CHUNK_BITS);
    this.chunks = new Array<Uint32Array | null>(chunks).fill(null);
    this.counts = new Float64Array(chunks);
  }

  /** Set bit `i` (0 ≤ i < n, an integer); true when it was not set before. */
  set(i: number): boolean {
    const c = Math.floor(i / CHUNK_BITS);
    let chunk = this.chunks[c]!;
    if (chunk === "full") return false;
    if (chunk === null) {
      chunk = this.chunks[c] = this.spare?.fill(0) ?? new Uint32Array(CHUNK_WORDS);
      this.spare = null;
    }
    const off = i - c * CHUNK_BITS;
    const w = off >>> 5;
    const m = 1 << (off & 31);
    if ((chunk[w]! & m) !== 0) return false;
    chunk[w] = chunk[w]! | m;
    if (++this.counts[c]! === Math.min(CHUNK_BITS, this.n - c * CHUNK_BITS)) {
      this.chunks[c] = "full";
      this.spare = chunk;
    }
    return true;
  }

  /** Bits 32w..32w+31 as an unsigned word (bits at or past n are 0, or 1 in a full last chunk). */
  word(w: number): number {
    const c = Math.floor(w / CHUNK_WORDS);
    const chunk = this.chunks[c];
    if (chunk === "full") return 0xffffffff;
    return chunk ? chunk[w - c * CHUNK_WORDS]! : 0;
  }

  /** Chunks allocated and not yet full (each CHUNK_BITS / 8 bytes). */
  get liveChunks(): number {
    return this.chunks.filter((c) => c !== null && c !== "full").length;
  }
}

/** Set bits of `bits` at indexes a..b inclusive. */
export function countBits(bits: SeqBits, a: number, b: number): number {
  let n = 0;
  for (let i = a; i <= b;) {
    const w = Math.floor(i / 32);
    const lo = i % 32;
    const hi = Math.min(31, lo + (b - i));
    const mask = hi - lo === 31 ? 0xffffffff : ((1 << (hi - lo + 1)) - 1) << lo;
    n += popcount(bits.word(w) & mask);
    i += hi - lo + 1;
  }
  return n;
}

/** The first index ≥ `from` and < `n` whose bit is `value` (1 or 0), or `n`. */
function nextBit(bits: SeqBits, from: number, n: number, value: 0 | 1): number {
  let i = from;
  while (i < n) {
    const w = Math.floor(i / 32);
    const word = (value === 1 ? bits.word(w) : ~bits.word(w)) >>> (i % 32);
    if (word !== 0) return Math.min(n, i + (31 - Math.clz32(word & -word)));
    i = (w + 1) * 32;
  }
  return n;
}

/**
 * Calls `gap(from, to)` for each maximal run from..to of indexes below bits.n neither set in `bits` nor inside
 * `rejected` (sorted disjoint inclusive ranges, as normalizeRanges gives them), in order, while it returns true.
 */
export function forEachGap(
  bits: SeqBits,
  rejected: ReadonlyArray<readonly [number, number]>,
  gap: (from: number, to: number) => boolean,
): void {
  const n = bits.n;
  let k = 0;
  for (let at = 0; at < n;) {
    const from = nextBit(bits, at, n, 0);
    if (from >= n) return;
    while (k < rejected.length && rejected[k]![1] < from) k++;
    if (k < rejected.length && rejected[k]![0] <= from) {
      at = rejected[k]![1] + 1;
      continue;
    }
    const end = Math.min(nextBit(bits, from, n, 1), k < rejected.length ? rejected[k]![0] : n);
    if (!gap(from, end - 1)) return;
    at = end;
  }
}

/**
 * An exact ledger built in the harness from the stored (gen, seq) pairs, fed in any order and in pages (`add`).
 * Memory: one bit per sent seq, in SeqBits' 128 KiB chunks, each allocated at its first stored seq and freed once all
 * its seqs are stored: pages in seq order keep about one chunk per generator (and each chunk with a lost seq), any
 * order at most sent/8 bytes (322 million seqs: 40 MB); plus a set of the (rare) unexpected pairs.
 */
export class SeqLedger {
  private readonly present: SeqBits[];
  private readonly unexpectedPairs = new Set<string>();
  private stored = 0;
  private distinct = 0;
  private unexpected = 0;
  private foreign = 0;

  /**
   * `genBase`: this run's first generator id (stored gens are genBase + index; outside the space they are foreign).
   * @throws RangeError when a sent count is not a non-negative safe integer
   */
  constructor(
    private readonly sent: readonly number[],
    private readonly rejected: ReadonlyArray<ReadonlyArray<readonly [number, number]>>,
    private readonly genBase = 0,
  ) {
    for (const n of sent) if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`bad sent count ${n}`);
    this.present = sent.map((n) => new SeqBits(n));
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
    if (p === undefined || !Number.isSafeInteger(seq) || seq < 0 || seq >= p.n) {
      this.unexpected += copies;
      const key = `${gen}-${seq}`;
      if (!this.unexpectedPairs.has(key)) {
        this.unexpectedPairs.add(key);
        this.distinct++;
      }
      return;
    }
    if (p.set(seq)) this.distinct++;
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
    if (collisions)
      this.present.forEach((p, g) => {
        for (let seq = nextBit(p, 0, p.n, 1); seq < p.n; seq = nextBit(p, seq + 1, p.n, 1))
          held.add(collisions.keyOf(g, seq));
      });
    let collided = 0;
    const gaps = new GapCollector();
    let lost = 0;
    let rejectedStored = 0;
    this.present.forEach((p, g) => {
      const rej = t.ranges[g]!;
      for (const [a, b] of rej) rejectedStored += countBits(p, a, b);
      // runs of seqs neither stored nor rejected: lost, but for a seq whose key a stored seq holds (collided)
      forEachGap(p, rej, (from, to) => {
        if (!collisions) {
          lost += to - from + 1;
          if (gaps.closed < MAX_MISSING_RANGES) gaps.missing(g, from, to);
        } else
          for (let seq = from; seq <= to; seq++) {
            if (held.has(collisions.keyOf(g, seq))) {
              collided++;
              gaps.close();
              continue;
            }
            lost++;
            if (gaps.closed < MAX_MISSING_RANGES) gaps.missing(g, seq, seq);
          }
        gaps.close(); // a gap ends at a stored or rejected seq, or at sent[g]
        return true;
      });
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
