import { describe, expect, it } from "vitest";
import { GapCollector, GEN_STRIDE, genBaseOf, inRunSpace, MAX_MISSING_RANGES, normalizeRanges, SeqLedger, sentTotals } from "../../core/ledger.ts";
import { windowEnd } from "../../harness/runner/completion.ts";
import { normalizeRanges as fromPostgres } from "../../plugins/sinks/postgres/verifier.ts";

describe("shared ledger arithmetic (pure computation, no sink involved)", () => {
  it("normalizeRanges merges and clamps; postgres.ts re-exports the same function", () => {
    expect(normalizeRanges([[5, 9], [0, 2], [3, 4], [20, 30], [-5, -1]], 25)).toEqual([[0, 9], [20, 24]]);
    expect(fromPostgres).toBe(normalizeRanges);
    expect(sentTotals([10, 5], [[[2, 3], [3, 4]], [[0, 9]]])).toEqual({ sent: 15, accepted: 7, rejected: 8, ranges: [[[2, 4]], [[0, 4]]] });
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
      sent: 14, accepted: 12, rejected: 2,
      stored: 6 + 3 + 3 + 1 + 2 + 1, // 16
      distinct: 6 + 2 + 1 + 1 + 1, // 11
      duplicated: 5, lost: 5, overwritten: 5, unexpected: 4,
      missingRanges: [[0, 3, 3], [0, 5, 5], [0, 8, 8], [1, 1, 2]], foreign: 0, rejectedStored: 1, deduplicated: 0,
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
    g.missing(0, 1, 1); g.missing(0, 2, 4); g.missing(1, 5, 5); g.close();
    expect(g.ranges).toEqual([[0, 1, 4], [1, 5, 5]]);
  });

  it("genBaseOf gives each run its own generator-id space, above 255 and within int32", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `20261201T0940${String(i % 60).padStart(2, "0")}Z-${i.toString(16).padStart(6, "0")}`);
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
    l.add(base + 1, 0); l.add(base + 1, 2);
    l.add(genBaseOf("20261201T093000Z-123456"), 1, 3); // another run's rows
    l.add(0, 0); // gen 0: nobody's run
    l.add(base + 9, 0); // this run's space, no such generator: unexpected
    expect(l.result()).toEqual({
      sent: 8, accepted: 6, rejected: 2, stored: 8, distinct: 8, duplicated: 0, lost: 1, overwritten: 0, unexpected: 1,
      missingRanges: [[1, 1, 1]], foreign: 4, rejectedStored: 2, deduplicated: 0,
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
