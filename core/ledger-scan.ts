/**
 * A ledger computed in one pass over every stored (gen, seq) pair of a sink table, streamed to the harness in any
 * order (plugins/sinks/postgres/verifier.ts reads them through one binary COPY). The figures are exactly those the SQL
 * verifiers compute at the sink (core/ledger.ts, "Ledger definitions" of plugins/sinks/postgres/verifier.ts), with
 * SQL's NULLs:
 * - a row whose gen is not NULL and outside [genBase, genBase + GEN_STRIDE) is foreign, in no other figure;
 * - every other row is stored; it is in range when gen = genBase + g with g < sent.length and seq is an integer in
 *   0..sent[g]-1, else unexpected (gen unknown or NULL, seq NULL or outside 0..sent[g]-1);
 * - distinct = distinct in-range (gen, seq) + distinct unexpected (gen, seq), NULL equal to NULL (SQL's DISTINCT);
 *   duplicated = stored − distinct;
 * - rejectedStored = distinct in-range seqs inside g's merged rejected ranges (normalizeRanges);
 * - lost = accepted − (distinct in range − rejectedStored); missingRanges = the first MAX_MISSING_RANGES maximal runs
 *   of seqs neither stored nor rejected, by gen then from (the gaps-and-islands query's answer).
 *
 * Memory: one bit per sent seq, in chunks (SeqBits) allocated when a first seq of theirs is stored and freed once all
 * of theirs are: a table read in the order it was written keeps a few chunks alive (whole, 322M seqs took 40 MB of
 * the harness's memory after a 60 GiB replay); rows in random order keep them all. Plus the distinct unexpected pairs in
 * a Set of at most `unexpectedLimit` keys. Unexpected pairs are not bounded by what was sent; past the limit the Set
 * is dropped and `unexpectedDistinct` is null: the caller then counts `distinct` at the sink (the PostgreSQL verifier
 * runs its reference SQL DISTINCT count in the same snapshot) and passes it to result(). Every other figure stays exact.
 */
import { countBits, forEachGap, GEN_STRIDE, MAX_MISSING_RANGES, normalizeRanges, SeqBits } from "./ledger.ts";
import type { Completion, Ledger } from "./verifier.ts";

// SeqBits lives in ./ledger.ts, whose SeqLedger holds it too (ledger.ts cannot import this file: no import circles)
export { SeqBits };

/** A stored integer column's value: a number (a safe integer), a bigint (an int8 beyond 2^53), or null (SQL NULL). */
export type ScanValue = number | bigint | null;

/** Distinct unexpected (gen, seq) pairs a LedgerScan keeps before it gives the distinct count up (see the file comment). */
export const UNEXPECTED_DISTINCT_LIMIT = 100_000;

/** `v` as a number when it is a safe integer (bigint or number), else null. */
function safeInteger(v: ScanValue): number | null {
  if (typeof v === "number") return Number.isSafeInteger(v) ? v : null;
  if (typeof v === "bigint")
    return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : null;
  return null;
}

/**
 * One pass over stored (gen, seq) pairs (see the file comment): `add` every row, then `result()` (the ledger) or
 * `completion()` (what is missing).
 */
export class LedgerScan {
  private readonly bits: SeqBits[];
  private readonly ranges: Array<Array<[number, number]>>;
  private readonly unexpectedPairs = new Set<string>();
  private stored = 0;
  private foreign = 0;
  private unexpected = 0;
  private inRange = 0;
  private unexpectedDistinctCount = 0;
  private overflow = false;

  /**
   * `sent[g]`: seqs 0..sent[g]-1 of generator index g (stored gen genBase + g); `rejected[g]`: its rejected ranges,
   * inclusive, in any order (merged and clamped here); `unexpectedLimit`: see the file comment.
   * @throws RangeError when a sent count is not a non-negative safe integer, or there are more than GEN_STRIDE generators
   */
  constructor(
    private readonly sent: readonly number[],
    rejected: ReadonlyArray<ReadonlyArray<readonly [number, number]>>,
    private readonly genBase = 0,
    private readonly unexpectedLimit = UNEXPECTED_DISTINCT_LIMIT,
  ) {
    if (sent.length > GEN_STRIDE)
      throw new RangeError(`${sent.length} generators: a run has at most ${GEN_STRIDE} (core/ledger.ts)`);
    for (const n of sent) if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`bad sent count ${n}`);
    this.bits = sent.map((n) => new SeqBits(n));
    this.ranges = sent.map((n, g) => normalizeRanges(rejected[g] ?? [], n));
  }

  /** One stored row. */
  add(gen: ScanValue, seq: ScanValue): void {
    let g = -1;
    if (gen !== null) {
      const id = typeof gen === "number" ? gen : Number(gen);
      if (!(id >= this.genBase && id < this.genBase + GEN_STRIDE)) {
        this.foreign++;
        return;
      }
      g = id - this.genBase;
    }
    this.stored++;
    const bits = this.bits[g];
    // a bigint seq is in range only when it is a safe integer (sent counts are)
    const s = typeof seq === "number" ? seq : typeof seq === "bigint" ? safeInteger(seq) : null;
    if (bits !== undefined && s !== null && s >= 0 && s < this.sent[g]! && Number.isInteger(s)) {
      if (bits.set(s)) this.inRange++;
      return;
    }
    this.unexpected++;
    if (this.overflow) return;
    const key = `${gen}:${seq}`;
    if (this.unexpectedPairs.has(key)) return;
    if (this.unexpectedPairs.size >= this.unexpectedLimit) {
      this.overflow = true;
      this.unexpectedPairs.clear();
      return;
    }
    this.unexpectedPairs.add(key);
    this.unexpectedDistinctCount++;
  }

  /** Distinct unexpected (gen, seq) pairs, or null once more than `unexpectedLimit` were seen (see the file comment). */
  get unexpectedDistinct(): number | null {
    return this.overflow ? null : this.unexpectedDistinctCount;
  }

  /** lost and the first MAX_MISSING_RANGES missing ranges [g, from, to] (what the completion query answers). */
  completion(): Omit<Completion, "tBefore" | "tAfter"> & {
    rejectedStored: number;
    accepted: number;
    rejected: number;
  } {
    let rejected = 0;
    let rejectedStored = 0;
    let sent = 0;
    const missingRanges: Array<[number, number, number]> = [];
    this.sent.forEach((n, g) => {
      const bits = this.bits[g]!;
      const rej = this.ranges[g]!;
      sent += n;
      for (const [a, b] of rej) {
        rejected += b - a + 1;
        rejectedStored += countBits(bits, a, b);
      }
      // maximal runs of seqs neither stored nor rejected, until MAX_MISSING_RANGES are listed
      if (missingRanges.length < MAX_MISSING_RANGES)
        forEachGap(bits, rej, (from, to) => missingRanges.push([g, from, to]) < MAX_MISSING_RANGES);
    });
    const accepted = sent - rejected;
    return {
      missing: accepted - (this.inRange - rejectedStored),
      missingRanges,
      stored: this.stored,
      rejectedStored,
      accepted,
      rejected,
    };
  }

  /**
   * The ledger. `distinctAtSink`: `distinct` counted elsewhere (the sink's own DISTINCT over the same rows), required
   * once the scan gave its count of distinct unexpected pairs up (unexpectedDistinct null), ignored otherwise.
   * @throws Error when the scan's own count is gone and none is given
   */
  result(distinctAtSink?: number): Ledger {
    const u = this.unexpectedDistinct;
    if (u === null && distinctAtSink === undefined)
      throw new Error(
        `more than ${this.unexpectedLimit} distinct unexpected (gen, seq) pairs: distinct must be counted at the sink`,
      );
    const c = this.completion();
    const distinct = u === null ? distinctAtSink! : this.inRange + u;
    return {
      sent: c.accepted + c.rejected,
      accepted: c.accepted,
      stored: this.stored,
      distinct,
      lost: c.missing,
      duplicated: this.stored - distinct,
      overwritten: 0,
      rejected: c.rejected,
      unexpected: this.unexpected,
      missingRanges: c.missingRanges,
      foreign: this.foreign,
      rejectedStored: c.rejectedStored,
      deduplicated: 0,
    };
  }
}
