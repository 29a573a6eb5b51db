// windowMap (./verifier.ts), pure: the width_bucket-plus-exceptions form the settle query applies per row must place
// every committed xid at the first snapshot that sees it by PostgreSQL's visibility rule (visibleIn), including xids
// that several snapshots saw in progress and snapshots across an xid epoch boundary. The same query on a real server:
// verifier-incremental.test.ts.
import { describe, expect, it } from "vitest";
import { parseSnapshot, visibleIn, widenXid, windowMap } from "./verifier.ts";

/** PostgreSQL's width_bucket(operand, thresholds): how many thresholds are at or below the operand. */
const widthBucket = (x: bigint, t: bigint[]): number => t.filter((v) => v <= x).length;

function firstSeeing(x: bigint, snaps: ReturnType<typeof parseSnapshot>[]): number {
  const i = snaps.findIndex((s) => visibleIn(x, s));
  return i < 0 ? snaps.length : i;
}

function mapped(x: bigint, m: ReturnType<typeof windowMap>): number {
  const e = m.exceptions.indexOf(x);
  return e >= 0 ? m.exceptionWindows[e]! : widthBucket(x, m.xmax);
}

describe("windowMap: the settle query's window of a committed xid", () => {
  it("equals the first snapshot that sees it, for every xid, with long-running transactions that commit late", () => {
    // xid 105 runs across three samples, 112 across two; 118 never commits before the last sample
    const snaps = ["100:104:", "100:110:105", "105:115:105,112", "112:120:112,118", "118:125:118"].map(parseSnapshot);
    const m = windowMap(snaps);
    expect(m.exceptions.map(Number).sort()).toEqual([105, 112, 118]);
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
      for (let x = 990n; x < next + 5n; x++) expect(mapped(x, m), `${texts.join(" ")} xid ${x}`).toBe(firstSeeing(x, snaps));
    }
  });

  it("widens a 32-bit xmin within the last snapshot's epoch as widenXid does (the query's CASE)", () => {
    const epoch = 3n << 32n;
    const m = windowMap([parseSnapshot(`${epoch - 10n}:${epoch + 20n}:`)]);
    expect(m.epochBase).toBe(epoch);
    for (const x32 of [0n, 5n, 19n, 20n, 21n, 0xfffffff0n, 0xffffffffn]) {
      const query = m.epochBase + x32 - (x32 > m.epochLow ? 1n << 32n : 0n);
      expect(query).toBe(widenXid(x32, epoch + 20n));
    }
    expect(widenXid(0xfffffff6n, epoch + 20n)).toBe(epoch - 10n); // the previous epoch's last xids
  });
});
