// PassSettler (./settle.ts): the settle query's arithmetic at the harness, on rows given by hand (no server): xids
// across a 2^32 wrap and below 3 (PostgreSQL's xid_age: INT_MAX), ms rounded half away from zero as numeric
// round() does, unstamped rows, the newest sent_at as epoch ms. The comparison with the query itself on a real server
// is in ./ledger-reuse.test.ts.
import { describe, expect, it } from "vitest";
import { PassSettler, settledFrom } from "./settle.ts";

const WRAP = 2 ** 32;
/** binary timestamptz of epoch ms `ms` plus `us` µs: µs from 2000-01-01 */
const ts = (ms: number, us = 0): number => (ms - 946_684_800_000) * 1000 + us;
const T = Date.UTC(2026, 11, 5, 8, 0, 0);

describe("PassSettler: the settle query's arithmetic (by hand, no server)", () => {
  it("places rows across the xid wrap by their full xid, and an xid below 3 as age() does (INT_MAX)", () => {
    // stable xid 2^32 + 10 (epoch 1); one sample whose snapshot saw everything below 2^32, with 2^32 − 3 in progress
    const s = new PassSettler([`${WRAP - 100}:${WRAP}:${WRAP - 3}`], BigInt(WRAP + 10));
    s.add(WRAP - 5, ts(T), ts(T, 1000)); // epoch 0, seen by the sample
    s.add(WRAP - 3, ts(T), ts(T, 1000)); // in progress at the sample: seen by none
    s.add(7, ts(T), ts(T, 1000)); // epoch 1 (2^32 + 7): after the sample
    s.add(2, ts(T), ts(T, 1000)); // frozen/bootstrap: stable − INT_MAX, long before the sample
    const out = settledFrom(s.buckets(), 1, 0, 0);
    expect(out.samples.map((p) => p.stored)).toEqual([2]);
    expect(out.final?.stored).toBe(4);
    expect(out.later?.buckets).toEqual([[1, 2]]);
  });

  it("rounds stored_at − sent_at to ms half away from zero, counts rows without a stamp apart, keeps the newest sent_at", () => {
    const s = new PassSettler([], 1000n);
    const cases: Array<[number, number]> = [
      [499, 0],
      [500, 1],
      [1500, 2],
      [-499, 0],
      [-500, -1],
      [-1500, -2],
      [2_000_000_499, 2_000_000],
      [-2_000_000_500, -2_000_001],
    ];
    for (const [us] of cases) s.add(900, ts(T), ts(T, us));
    s.add(900, null, ts(T));
    s.add(900, ts(T + 5, 123), null); // the newest sent_at, on an unstamped row
    const out = settledFrom(s.buckets(), 0, 0, 0);
    const want = new Map<number, number>();
    for (const [, ms] of cases) want.set(ms, (want.get(ms) ?? 0) + 1);
    expect(out.later?.buckets).toEqual([...want].sort((a, b) => a[0] - b[0]));
    expect(out.later?.unstamped).toBe(2);
    expect(out.final?.stored).toBe(cases.length + 2);
    expect(out.final?.newestSentAtMs).toBe(T + 5.123);
  });

  it("takes stamps beyond 2^53 µs (bigints: some 285 years from 2000) exactly, and an infinite stamp as no time", () => {
    const far = (BigInt(Date.UTC(2300, 0, 1)) - 946_684_800_000n) * 1000n; // 2300-01-01 as binary timestamptz
    const s = new PassSettler([], 1000n);
    s.add(900, far, far + 1_500n); // 1.5 ms: 2 ms
    s.add(900, far - 2_000_000_499n, far); // 2,000,000.499 ms: 2,000,000 ms
    s.add(900, ts(T), far); // stored 274 years after it was sent
    s.add(900, 2n ** 63n - 1n, ts(T)); // sent_at 'infinity'
    s.add(900, ts(T), -(2n ** 63n)); // stored_at '-infinity'
    const out = settledFrom(s.buckets(), 0, 0, 0);
    const centuries = Number((far - BigInt(ts(T)) + 500n) / 1000n);
    expect(out.later?.buckets).toEqual([
      [2, 1],
      [2_000_000, 1],
      [centuries, 1],
    ]);
    expect(out.later?.unstamped).toBe(2);
    expect(out.final?.newestSentAtMs).toBe(Date.UTC(2300, 0, 1)); // not the infinite one
  });

  it("refuses a mark that is not a snapshot", () => {
    expect(() => new PassSettler(["not a snapshot"], 5n)).toThrow(/not a pg_snapshot/);
  });
});
