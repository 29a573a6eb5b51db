/**
 * For the collector pipeline tests (a collector killed mid-run): read the seqs the PostgreSQL sink holds, directly
 * over `pg`, and check the run's ledger against them, independently of the verifier's own SQL.
 */
import pg from "pg";
import { expect } from "vitest";
import type { RunRecord } from "../../harness/results/types.ts";

/** Where the harness reaches the sink (the run's "sink" event). */
export interface SinkInfo {
  host: string;
  port: number;
  params: Record<string, string>;
}

/** Every seq stored in the sink's table (`params.table`), as a set. */
export async function readStoredSeqs(s: SinkInfo): Promise<Set<number>> {
  const c = new pg.Client({ host: s.host, port: s.port, user: s.params.user, database: s.params.database });
  await c.connect();
  try {
    const r = await c.query<{ seq: string }>(`SELECT seq FROM ${s.params.table}`);
    return new Set(r.rows.map((x) => Number(x.seq)));
  } finally {
    await c.end();
  }
}

/** Inclusive runs of the seqs in [0, sent) that are not in `present`. */
export function absentRanges(present: ReadonlySet<number>, sent: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let s = 0; s < sent; s++) {
    if (present.has(s)) continue;
    const last = out.at(-1);
    if (last && last[1] === s - 1) last[1] = s;
    else out.push([s, s]);
  }
  return out;
}

/**
 * Assert that the ledger of a one-generator run names exactly the seqs absent from `present` (the final table):
 * stored = |present|, nothing duplicated or unexpected, rejected = the generator's rejected ranges, and lost and
 * missingRanges (the first 20 runs, [gen 0, from, to]) = the absent seqs that were not rejected.
 * @returns the number of lost seqs
 */
export function expectLedgerNamesExactlyTheAbsentSeqs(record: RunRecord, present: ReadonlySet<number>): number {
  const l = record.ledger!;
  expect(l.stored).toBe(present.size);
  expect(l).toMatchObject({ duplicated: 0, unexpected: 0 });
  const rejected = new Set<number>();
  for (const [a, b] of record.generator!.rejectedRanges) for (let s = a; s <= b; s++) rejected.add(s);
  expect(l.rejected).toBe(rejected.size);
  const absentCount = absentRanges(present, l.sent).reduce((n, [a, b]) => n + b - a + 1, 0);
  expect(absentCount).toBe(l.sent - l.stored);
  const lostRanges = absentRanges(new Set([...present, ...rejected]), l.sent);
  expect(l.lost).toBe(lostRanges.reduce((n, [a, b]) => n + b - a + 1, 0));
  expect(l.lost + [...rejected].filter((s) => !present.has(s)).length).toBe(l.sent - l.stored);
  expect(l.missingRanges).toEqual(lostRanges.slice(0, 20).map(([a, b]) => [0, a, b]));
  return l.lost;
}
