import { describe, expect, it } from "vitest";
import { GapCollector, MAX_MISSING_RANGES, normalizeRanges, SeqLedger, sentTotals } from "../../core/ledger.ts";
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
      missingRanges: [[0, 3, 3], [0, 5, 5], [0, 8, 8], [1, 1, 2]],
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
});
