import { describe, expect, it } from "vitest";
import {
  GapCollector,
  GEN_STRIDE,
  genBaseOf,
  inRunSpace,
  MAX_MISSING_RANGES,
  normalizeRanges,
  SeqLedger,
  sentTotals,
} from "../../core/ledger.ts";
import { windowEnd } from "../../harness/runner/completion.ts";
import { normalizeRanges as fromPostgres } from "../../plugins/sinks/postgres/verifier.ts";

describe("shared ledger arithmetic (pure computation, no sink involved)", () => {
  it("normalizeRanges merges and clamps; postgres.ts re-exports the same function", () => {
    expect(
      normalizeRanges(
        [
          [5, 9],
          [0, 2],
          [3, 4],
          [20, 30],
          [-5, -1],
        ],
        25,
      ),
    ).toEqual([
      [0, 9],
      [20, 24],
    ]);
    expect(fromPostgres).toBe(normalizeRanges);
    expect(
      sentTotals(
        [10, 5],
        [
          [
            [2, 3],
            [3, 4],
          ],
          [[0, 9]],
        ],
      ),
    ).toEqual({ sent: 15, accepted: 7, rejected: 8, ranges: [[[2, 4]], [[0, 4]]] });
  });

  it("SeqLedger: pages in any order; lost excludes rejected; stored rejected seqs stay rejected; duplicates and unexpected counted", () => {
    const l = new SeqLedger([10, 4], [[[6, 7]], []]);
    for (const s of [9, 0, 1, 2, 4, 6]) l.add(0, s); // 3, 5, 8 lost; 6 rejected but stored; 7 rejected
    l.add(0, 1, 3); // two more copies of seq 1
    l.add(1, 0);
    l.add(1, 3);
    l.add(1, 3); // gen 1: 1, 2 lost; 3 duplicated
    l.add(0, 10); // beyond sent
    l.add(7, 0, 2); // unknown generator, twice
    l.addUnkeyed(1);
    expect(l.result(5)).toEqual({
      sent: 14,
      accepted: 12,
      rejected: 2,
      stored: 6 + 3 + 3 + 1 + 2 + 1, // 16
      distinct: 6 + 2 + 1 + 1 + 1, // 11
      duplicated: 5,
      lost: 5,
      overwritten: 5,
      unexpected: 4,
      missingRanges: [
        [0, 3, 3],
        [0, 5, 5],
        [0, 8, 8],
        [1, 1, 2],
      ],
      foreign: 0,
      rejectedStored: 1,
      deduplicated: 0,
    });
  });

  it("SeqLedger lists at most MAX_MISSING_RANGES ranges but counts every lost seq", () => {
    const l = new SeqLedger([200], [[]]);
    for (let s = 0; s < 200; s += 2) l.add(0, s);
    const r = l.result();
    expect(r.lost).toBe(100);
    expect(r.missingRanges).toHaveLength(MAX_MISSING_RANGES);
    expect(r.missingRanges[19]).toEqual([0, 39, 39]);
    const g = new GapCollector();
    g.missing(0, 1, 1);
    g.missing(0, 2, 4);
    g.missing(1, 5, 5);
    g.close();
    expect(g.ranges).toEqual([
      [0, 1, 4],
      [1, 5, 5],
    ]);
  });

  it("SeqLedger counts every copy of a (gen, seq): copies > 1 and repeated rows are duplicates, copies ≤ 0 nothing", () => {
    const l = new SeqLedger([6], [[]]);
    l.add(0, 0, 3);
    l.add(0, 0, 2);
    l.add(0, 1);
    l.add(0, 1);
    l.add(0, 4, 4);
    l.add(0, 2, 0);
    l.add(0, 3, -1);
    expect(l.result()).toEqual({
      sent: 6,
      accepted: 6,
      rejected: 0,
      stored: 11,
      distinct: 3,
      duplicated: 8,
      lost: 3,
      overwritten: 0,
      unexpected: 0,
      missingRanges: [
        [0, 2, 3],
        [0, 5, 5],
      ],
      foreign: 0,
      rejectedStored: 0,
      deduplicated: 0,
    });
  });

  const C = 2 ** 20; // SeqBits' chunk (core/ledger.ts)

  it("SeqLedger: a seq stored again once its chunk is full (every seq stored) is a duplicate, distinct unchanged", () => {
    const l = new SeqLedger([C + 2, 3], [[], []]);
    for (let s = 0; s < C; s++) l.add(0, s); // chunk 0 of gen 0 full
    l.add(0, 5);
    l.add(0, C - 1, 2);
    l.add(0, C + 1); // gen 0's last chunk: C + 1 stored, C lost
    for (const s of [0, 1, 2, 2]) l.add(1, s); // gen 1's only chunk full, then seq 2 again
    expect(l.result()).toEqual({
      sent: C + 5,
      accepted: C + 5,
      rejected: 0,
      stored: C + 8,
      distinct: C + 4,
      duplicated: 4,
      lost: 1,
      overwritten: 0,
      unexpected: 0,
      missingRanges: [[0, C, C]],
      foreign: 0,
      rejectedStored: 0,
      deduplicated: 0,
    });
  });

  it("SeqLedger: rejected ranges and gaps across chunk edges (2^20 seqs)", () => {
    // rejected C-3..C+2 and 2C+2..2C+20 (clamped to 2C+9); absent C-5, C-4 (lost), C, C+1 (rejected), C+3 (lost),
    // 2C-2..2C (lost, across the edge of chunks 1 and 2), 2C+5 (rejected)
    const l = new SeqLedger(
      [2 * C + 10],
      [
        [
          [C - 3, C + 2],
          [2 * C + 2, 2 * C + 20],
        ],
      ],
    );
    const absent = new Set([C - 5, C - 4, C, C + 1, C + 3, 2 * C - 2, 2 * C - 1, 2 * C, 2 * C + 5]);
    for (let s = 0; s < 2 * C + 10; s++) if (!absent.has(s)) l.add(0, s);
    expect(l.result()).toEqual({
      sent: 2 * C + 10,
      accepted: 2 * C - 4,
      rejected: 14,
      stored: 2 * C + 1,
      distinct: 2 * C + 1,
      duplicated: 0,
      lost: 6,
      overwritten: 0,
      unexpected: 0,
      missingRanges: [
        [0, C - 5, C - 4],
        [0, C + 3, C + 3],
        [0, 2 * C - 2, 2 * C],
      ],
      foreign: 0,
      rejectedStored: 4 + 7,
      deduplicated: 0,
    });
  });

  it("SeqLedger with SinkCollisions: an absent seq whose key a stored seq holds collided (not lost); a key no stored seq holds is lost", () => {
    // gen 0 seq 5 and gen 1 seq 2 share a key, and so do gen 0 seqs 6 and 7 (neither stored); every other key is its own
    const keyOf = (g: number, s: number): string =>
      (g === 0 && s === 5) || (g === 1 && s === 2) ? "shared" : g === 0 && s >= 6 ? "pair" : `${g}-${s}`;
    const l = new SeqLedger([8, 3], [[], []]);
    l.add(0, 0);
    l.add(1, 2);
    const expected = {
      sent: 11,
      accepted: 11,
      rejected: 0,
      stored: 2,
      distinct: 2,
      duplicated: 0,
      lost: 8,
      unexpected: 0,
      missingRanges: [
        [0, 1, 4],
        [0, 6, 7],
        [1, 0, 1],
      ],
      foreign: 0,
      rejectedStored: 0,
    };
    expect(l.result(0, 2, { keyOf, as: "deduplicated" })).toEqual({
      ...expected,
      overwritten: 0,
      deduplicated: 3,
    });
    expect(l.result(1, 0, { keyOf, as: "overwritten" })).toEqual({
      ...expected,
      overwritten: 2,
      deduplicated: 0,
    });
    expect(l.result()).toEqual({
      ...expected,
      lost: 9,
      missingRanges: [
        [0, 1, 7],
        [1, 0, 1],
      ],
      overwritten: 0,
      deduplicated: 0,
    });
  });

  it("SeqLedger fed 3 × 2^20 + 5 of 3 × 2^20 + 10 seqs in ascending order: the last 5 are lost", () => {
    const n = 3 * C + 10;
    const l = new SeqLedger([n], [[]]);
    for (let s = 0; s < n - 5; s++) l.add(0, s);
    expect(l.result()).toEqual({
      sent: n,
      accepted: n,
      rejected: 0,
      stored: n - 5,
      distinct: n - 5,
      duplicated: 0,
      lost: 5,
      overwritten: 0,
      unexpected: 0,
      missingRanges: [[0, n - 5, n - 1]],
      foreign: 0,
      rejectedStored: 0,
      deduplicated: 0,
    });
  });

  it("genBaseOf gives each run its own generator-id space, above 255 and within int32", () => {
    const ids = Array.from(
      { length: 2000 },
      (_, i) => `20261201T0940${String(i % 60).padStart(2, "0")}Z-${i.toString(16).padStart(6, "0")}`,
    );
    const bases = ids.map(genBaseOf);
    for (const b of bases) {
      expect(b % GEN_STRIDE).toBe(0);
      expect(b).toBeGreaterThanOrEqual(GEN_STRIDE);
      expect(b + GEN_STRIDE - 1).toBeLessThanOrEqual(2 ** 31 - 1);
    }
    expect(new Set(bases).size).toBe(bases.length);
    expect(genBaseOf(ids[0]!)).toBe(bases[0]); // a function of the run id alone
    expect(inRunSpace(bases[0]! + 255, bases[0]!)).toBe(true);
    expect(inRunSpace(bases[0]! + 256, bases[0]!)).toBe(false);
  });

  it("SeqLedger counts rows of another run as foreign, in no other figure, and rejected seqs stored all the same", () => {
    const base = genBaseOf("20261201T094000Z-abcdef");
    const l = new SeqLedger([5, 3], [[[1, 2]], []], base);
    for (let s = 0; s < 5; s++) l.add(base, s); // 1 and 2 rejected yet stored
    l.add(base + 1, 0);
    l.add(base + 1, 2);
    l.add(genBaseOf("20261201T093000Z-123456"), 1, 3); // another run's rows
    l.add(0, 0); // gen 0: nobody's run
    l.add(base + 9, 0); // this run's space, no such generator: unexpected
    expect(l.result()).toEqual({
      sent: 8,
      accepted: 6,
      rejected: 2,
      stored: 8,
      distinct: 8,
      duplicated: 0,
      lost: 1,
      overwritten: 0,
      unexpected: 1,
      missingRanges: [[1, 1, 1]],
      foreign: 4,
      rejectedStored: 2,
      deduplicated: 0,
    });
  });

  it("windowEnd: the first point with the final count, and the interval that holds the last arrival", () => {
    const p = (t: number, stored: number, countQueryMs = 2) => ({ t, stored, countQueryMs });
    const points = [p(0, 0), p(100, 900), p(115, 990), p(130, 999), p(145, 999, 4), p(1145, 999)];
    expect(windowEnd(points, 999)).toEqual({ index: 3, windowErrorMs: 130 + 1 - (115 - 1) });
    expect(windowEnd(points, 1000)).toEqual({ index: -1, windowErrorMs: null });
    expect(windowEnd([p(0, 5)], 5)).toEqual({ index: 0, windowErrorMs: null });
  });
});
