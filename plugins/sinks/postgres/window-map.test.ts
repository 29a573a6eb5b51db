// windowMap (./verifier.ts), pure: the step function the settle query applies per row (width_bucket over its breaks)
// must place every committed xid at the first snapshot that sees it by PostgreSQL's visibility rule (visibleIn),
// including xids that several snapshots saw in progress; stableXid must widen age()'s base across an xid epoch
// boundary. The same query on a real server: verifier-incremental.test.ts.
import { describe, expect, it } from "vitest";
import { parseSnapshot, stableXid, visibleIn, windowMap, windowOf } from "./settle.ts";

/** PostgreSQL's width_bucket(operand, thresholds): how many thresholds are at or below the operand. */
const widthBucket = (x: bigint, t: bigint[]): number => t.filter((v) => v <= x).length;

/** What the query computes: windows[width_bucket(x, breaks) + 1] (1-based), checked against windowOf's search. */
function mapped(x: bigint, m: ReturnType<typeof windowMap>): number {
  const w = m.windows[widthBucket(x, m.breaks)]!;
  expect(windowOf(m, x)).toBe(w);
  return w;
}

function firstSeeing(x: bigint, snaps: ReturnType<typeof parseSnapshot>[]): number {
  const i = snaps.findIndex((s) => visibleIn(x, s));
  return i < 0 ? snaps.length : i;
}

describe("windowMap: the settle query's window of a committed xid", () => {
  it("equals the first snapshot that sees it, for every xid, with long-running transactions that commit late", () => {
    // xid 105 runs across three samples, 112 across two; 118 never commits before the last sample
    const snaps = ["100:104:", "100:110:105", "105:115:105,112", "112:120:112,118", "118:125:118"].map(
      parseSnapshot,
    );
    const m = windowMap(snaps);
    expect(m.windows).toHaveLength(m.breaks.length + 1);
    for (let x = 90n; x < 130n; x++) expect(mapped(x, m), `xid ${x}`).toBe(firstSeeing(x, snaps));
    expect(mapped(105n, m)).toBe(3);
    expect(mapped(118n, m)).toBe(5); // no sample saw it: the window after the last
  });

  it("matches random snapshot sequences xid by xid", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 200; round++) {
      const open = new Set<bigint>();
      let next = 1000n;
      const texts: string[] = [];
      for (let i = 0; i < 12; i++) {
        for (let k = rnd(4); k > 0; k--) if (rnd(3) === 0) open.add(next + BigInt(rnd(3)));
        next += BigInt(rnd(6));
        for (const x of [...open]) if (x >= next || rnd(2) === 0) open.delete(x);
        const xip = [...open].filter((x) => x < next).sort((a, b) => Number(a - b));
        texts.push(`${xip[0] ?? next}:${next}:${xip.join(",")}`);
      }
      const snaps = texts.map(parseSnapshot);
      const m = windowMap(snaps);
      for (let x = 990n; x < next + 5n; x++)
        expect(mapped(x, m), `${texts.join(" ")} xid ${x}`).toBe(firstSeeing(x, snaps));
    }
  });

  it("stableXid: age()'s base as a full xid, from age('3'::xid) and a full xmax at or below it, across an epoch boundary", () => {
    const epoch = 3n << 32n;
    // (int32)(stable − 3) as PostgreSQL computes it
    const age3 = (stable: bigint): number => Number(BigInt.asIntN(32, (stable & 0xffffffffn) - 3n));
    for (const [stable, xmax] of [
      [epoch + 20n, epoch + 20n],
      [epoch + 25n, epoch - 10n],
      [epoch - 2n, epoch - 40n],
      [(1n << 31n) + 7n, 1000n],
      [1000n, 990n],
    ] as const) {
      expect(stableXid(age3(stable), xmax)).toBe(stable);
    }
    // a row's full xid is stable − age(xmin), age = (int32)(stable − xmin)
    const stable = epoch + 20n;
    const mask = 0xffffffffn;
    for (const x of [epoch - 10n, epoch + 3n, epoch + 19n])
      expect(stable - BigInt.asIntN(32, (stable & mask) - (x & mask))).toBe(x);
  });
});
