// The one-pass ledger scan (core/ledger-scan.ts) against a naive reference written from the "Ledger definitions" of
// plugins/sinks/postgres/verifier.ts (SQL semantics: NULL gens are this run's, DISTINCT treats NULL as equal to NULL),
// over random multisets of (gen, seq) with NULLs, duplicates, foreign gens, unknown gens, out-of-range and bigint
// seqs, overlapping and reversed rejected ranges, generators that sent nothing. Pure computation, no sink involved.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GEN_STRIDE, MAX_MISSING_RANGES } from "../../core/ledger.ts";
import { LedgerScan, SeqBits, type ScanValue } from "../../core/ledger-scan.ts";
import type { Ledger } from "../../core/verifier.ts";

type Row = [number | null, ScanValue];

/** The ledger by its definitions, seq by seq, with a Set of every distinct pair. */
function reference(
  sent: number[],
  rejected: Array<Array<[number, number]>>,
  genBase: number,
  rows: Row[],
): Ledger & { distinctUnexpected: number } {
  let stored = 0,
    foreign = 0,
    unexpected = 0;
  const distinct = new Set<string>();
  const unexpectedPairs = new Set<string>();
  const present = sent.map(() => new Set<number>());
  for (const [gen, seq] of rows) {
    if (gen !== null && (gen < genBase || gen >= genBase + GEN_STRIDE)) {
      foreign++;
      continue;
    }
    stored++;
    const key = `${gen}|${seq}`; // String(3n) === String(3): an int8 is the same value however it arrives
    distinct.add(key);
    const g = gen === null ? -1 : gen - genBase;
    const n = sent[g];
    const s = seq === null ? null : Number(seq);
    if (n === undefined || s === null || s < 0 || s >= n) {
      unexpected++;
      unexpectedPairs.add(key);
    } else present[g]!.add(s);
  }
  let totalSent = 0,
    totalRejected = 0,
    lost = 0,
    rejectedStored = 0;
  const missingRanges: Array<[number, number, number]> = [];
  sent.forEach((n, g) => {
    totalSent += n;
    const rej = new Set<number>();
    for (const [a, b] of rejected[g] ?? [])
      for (let s = Math.min(a, b); s <= Math.max(a, b); s++) if (s >= 0 && s < n) rej.add(s);
    totalRejected += rej.size;
    for (let s = 0; s < n; s++) {
      if (rej.has(s) && present[g]!.has(s)) rejectedStored++;
      if (rej.has(s) || present[g]!.has(s)) continue;
      lost++;
      const last = missingRanges.at(-1);
      if (last && last[0] === g && last[2] === s - 1) last[2] = s;
      else missingRanges.push([g, s, s]);
    }
  });
  return {
    sent: totalSent,
    accepted: totalSent - totalRejected,
    stored,
    distinct: distinct.size,
    lost,
    duplicated: stored - distinct.size,
    overwritten: 0,
    rejected: totalRejected,
    unexpected,
    missingRanges: missingRanges.slice(0, MAX_MISSING_RANGES),
    foreign,
    rejectedStored,
    deduplicated: 0,
    distinctUnexpected: unexpectedPairs.size,
  };
}

const genBase = fc.constantFrom(0, GEN_STRIDE, 7 * GEN_STRIDE);
const cases = genBase.chain((base) =>
  fc.record({
    base: fc.constant(base),
    sent: fc.array(
      fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 60, max: 140 })),
      { maxLength: 4 },
    ),
    rejected: fc.array(
      fc.array(fc.tuple(fc.integer({ min: -5, max: 150 }), fc.integer({ min: -5, max: 150 })), {
        maxLength: 4,
      }),
      { maxLength: 4 },
    ),
    rows: fc.array(
      fc.tuple(
        fc.oneof(
          { weight: 8, arbitrary: fc.integer({ min: base, max: base + 5 }) }, // this run's, some past sent.length: unknown
          { weight: 1, arbitrary: fc.constant(null) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(base - 1, base + GEN_STRIDE, base + GEN_STRIDE + 3, 2 ** 31 - 1),
          }, // foreign
        ),
        fc.oneof(
          { weight: 10, arbitrary: fc.integer({ min: -3, max: 145 }) },
          { weight: 1, arbitrary: fc.constant(null) },
          {
            weight: 1,
            arbitrary: fc.constantFrom<ScanValue>(3n, 2n ** 60n, -(2n ** 62n), Number.MAX_SAFE_INTEGER),
          },
        ),
      ),
      { maxLength: 250, size: "max" },
    ), // "max": up to 250 rows (the default size stays near 10)
    limit: fc.constantFrom(0, 1, 3, 100_000),
    shuffle: fc.boolean(),
  }),
);

describe("LedgerScan: one pass over stored (gen, seq) pairs equals the ledger's definitions (pure computation, no sink involved)", () => {
  it("equals the naive reference on random multisets, whatever the order and the unexpected-pair limit", () => {
    fc.assert(
      fc.property(cases, ({ base, sent, rejected, rows, limit, shuffle }) => {
        const scan = new LedgerScan(sent, rejected, base, limit);
        for (const [gen, seq] of shuffle ? [...rows].reverse() : rows) scan.add(gen, seq);
        const { distinctUnexpected, ...want } = reference(sent, rejected, base, rows);
        expect(scan.unexpectedDistinct === null).toBe(distinctUnexpected > limit);
        if (scan.unexpectedDistinct === null) {
          expect(() => scan.result()).toThrow(/distinct must be counted at the sink/);
        } else expect(scan.unexpectedDistinct).toBe(distinctUnexpected);
        expect(scan.result(scan.unexpectedDistinct === null ? want.distinct : -1)).toEqual(want); // -1: ignored while the scan counts
        const c = scan.completion();
        expect([c.missing, c.missingRanges]).toEqual([want.lost, want.missingRanges]);
      }),
      { numRuns: 200 },
    );
  });

  it("finds gaps across 32-bit words, at both ends, beside rejected ranges, in large generators", () => {
    const scan = new LedgerScan(
      [100_000, 64, 0],
      [
        [
          [40, 70],
          [99_990, 99_999],
        ],
        [],
      ],
    );
    for (let s = 0; s < 100_000; s++)
      if (s % 10_000 !== 5 && !(s >= 31 && s <= 95) && s !== 0) scan.add(0, s);
    for (let s = 0; s < 64; s++) if (s !== 31 && s !== 32) scan.add(1, s);
    const l = scan.result();
    // gen 0: 0; 31..39 and 71..95 around the rejected 40..70; 10005, 20005, …; 99_990.. rejected (none lost)
    expect(l.missingRanges).toEqual([
      [0, 0, 0],
      [0, 5, 5],
      [0, 31, 39],
      [0, 71, 95],
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => [0, k * 10_000 + 5, k * 10_000 + 5]),
      [1, 31, 32],
    ]);
    expect(l).toMatchObject({
      sent: 100_064,
      rejected: 41,
      lost: 1 + 1 + 9 + 25 + 9 + 2,
      rejectedStored: 10,
      stored: 100_000 - 1 - 10 - 65 + 62,
    });
  });

  it("keeps its bits in chunks: a chunk every seq of which is stored is freed, and gaps, rejected ranges and full chunks meet across chunk edges", () => {
    const C = 2 ** 20; // SeqBits' chunk
    const n = 3 * C + 5;
    // in seq order, the full chunks are freed as the pass goes: one chunk is alive at a time
    const bits = new SeqBits(n);
    let most = 0;
    for (let s = 0; s < n; s++) {
      expect(bits.set(s)).toBe(true);
      if (s % 4096 === 0) most = Math.max(most, bits.liveChunks);
    }
    expect([most, bits.liveChunks, bits.set(C + 17), bits.set(n - 1)]).toEqual([1, 0, false, false]);
    // a scan with gaps on both sides of each chunk edge, a rejected range across one and a chunk stored whole
    const gaps = new Set([0, C - 1, C, 2 * C - 2, 3 * C, n - 1]); // chunk 2 (2C..3C-1) stored whole
    const scan = new LedgerScan([n], [[[C - 5, C + 5]]]);
    for (let s = n - 1; s >= 0; s--) if (!gaps.has(s)) scan.add(0, s); // descending, for once
    scan.add(0, 2 * C + 3); // a copy, in a full chunk
    const l = scan.result();
    expect(l.missingRanges).toEqual([
      [0, 0, 0],
      [0, 2 * C - 2, 2 * C - 2],
      [0, 3 * C, 3 * C],
      [0, n - 1, n - 1],
    ]);
    expect(l).toMatchObject({
      sent: n,
      rejected: 11,
      rejectedStored: 9,
      lost: 4,
      stored: n - 6 + 1,
      distinct: n - 6,
      duplicated: 1,
    });
  });

  it("refuses more generators than a run's id space holds, and bad sent counts", () => {
    expect(() => new LedgerScan(new Array<number>(GEN_STRIDE + 1).fill(1), [])).toThrow(RangeError);
    expect(() => new LedgerScan([1.5], [])).toThrow(/bad sent count/);
  });
});
