/**
 * Settling the samples (./verifier.ts afterLoad, the file comment there): which sample first saw each committed row,
 * from the samples' snapshots, and the delivery latency of the rows per sample window. Two readers compute the same
 * figures: the settle query (./verifier.ts settleIn: one pass of SQL at the sink, the reference and the fallback),
 * and PassSettler, which takes the rows of the completion check's own pass (./verifier.ts missing(): xmin, sent_at
 * and stored_at come with gen and seq), so that the table is read by one backend once after the load. The settle
 * query beside that pass cost the sink a second backend's CPU, most of the pass's own (docs/measurements.md, "Figures
 * moved from code comments").
 *
 * Both bucket rows by (window, stored_at − sent_at in whole ms) with their count and newest sent_at (SettleBucket);
 * settledFrom turns buckets into SettledSamples.
 */
import type { DeliveryWindow, SettledSamples } from "../../../core/verifier.ts";

/** A pg_snapshot as full xids. */
export interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  xip: Set<bigint>;
}

/** A pg_snapshot's text form "xmin:xmax:xip,…" (PostgreSQL's pg_snapshot_out), as full xids. */
export function parseSnapshot(text: string): Snapshot {
  const [xmin = "", xmax = "", xip = ""] = text.split(":");
  if (!/^\d+$/.test(xmin) || !/^\d+$/.test(xmax))
    throw new Error(`not a pg_snapshot: ${JSON.stringify(text)}`);
  return {
    xmin: BigInt(xmin),
    xmax: BigInt(xmax),
    xip: new Set(xip === "" ? [] : xip.split(",").map(BigInt)),
  };
}

/**
 * Which sample first sees each committed transaction, as a step function one SQL binary search applies per row
 * (PostgresVerifier afterLoad): the window of a committed full xid x is `windows[k]`, k the number of `breaks` at or
 * below x (PostgreSQL's width_bucket; windowOf). For samples' snapshots `snaps` (in sample order, full xids), a
 * committed xid that no snapshot had in progress (in no xip) is visible in snapshot i exactly when it is below xmax_i
 * (visibleIn), so between two of the samples' xmax its window is constant; an xid that some snapshot had in progress
 * gets a step of its own (x, x + 1). Each step's window is the first snapshot that sees its first xid, by visibleIn
 * (samples' xmax never decrease: one connection's snapshots). Windows run 0..snaps.length (snaps.length: no sample saw
 * it); `windows` has one more entry than `breaks`.
 */
export function windowMap(snaps: readonly Snapshot[]): { breaks: bigint[]; windows: number[] } {
  const firstSeeing = (x: bigint): number => {
    let lo = 0;
    let hi = snaps.length; // visibility only grows for a committed xid
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (visibleIn(x, snaps[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const points = new Set<bigint>();
  for (const s of snaps) {
    points.add(s.xmax);
    for (const x of s.xip) points.add(x).add(x + 1n);
  }
  const breaks = [...points].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // below the first break: below every xmax and in no xip, so the first sample sees it (or none, with no samples)
  return { breaks, windows: [0, ...breaks.map(firstSeeing)] };
}

/** The window windowMap's step function gives full xid `x` (what the settle query computes per row). */
export function windowOf<T extends bigint | number>(
  map: { breaks: readonly T[]; windows: readonly number[] },
  x: T,
): number {
  let lo = 0;
  let hi = map.breaks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (map.breaks[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return map.windows[lo]!;
}

/**
 * The full xid age() counts from in a transaction (PostgreSQL's GetStableLatestTransactionId, 32 bits): `age3` is
 * age('3'::xid) there, (int32)(stable − 3); `xmax` a full xid at or below it within 2^31 (the transaction's snapshot
 * xmax). A row's full xid is then stable − age(xmin).
 */
export function stableXid(age3: number, xmax: bigint): bigint {
  const low = (3n + BigInt(age3)) & 0xffffffffn;
  return xmax + ((low - (xmax & 0xffffffffn)) & 0xffffffffn);
}

/** Whether a committed transaction is visible in a snapshot (PostgreSQL's pg_visible_in_snapshot / XidInMVCCSnapshot). */
export function visibleIn(xid: bigint, s: Snapshot): boolean {
  return xid < s.xmin || (xid < s.xmax && !s.xip.has(xid));
}

/** Rows of one (window, ms) bucket: `ms` null for rows without sent_at or stored_at; `newest` sent_at in epoch ms, or null. */
export interface SettleBucket {
  w: number;
  ms: number | null;
  n: number;
  newest: number | null;
}

/**
 * SettledSamples from the buckets of `marks` samples' windows (0..marks; `marks`: after the last sample): each
 * sample's stored count (the rows of its window and every earlier one), newest sent_at so far and delivery window;
 * `final` every row, timed by tBefore/tAfter (epoch ms around the statement that took the settling's snapshot).
 */
export function settledFrom(
  buckets: Iterable<SettleBucket>,
  marks: number,
  tBefore: number,
  tAfter: number,
): SettledSamples {
  const rows = new Array<number>(marks + 1).fill(0);
  const newest = new Array<number | null>(marks + 1).fill(null);
  const windows: DeliveryWindow[] = Array.from({ length: marks + 1 }, () => ({
    buckets: [],
    resolutionMs: 1,
    unstamped: 0,
  }));
  for (const b of buckets) {
    const w = windows[b.w]!;
    rows[b.w]! += b.n;
    if (b.newest !== null) newest[b.w] = Math.max(newest[b.w] ?? 0, b.newest);
    if (b.ms === null) w.unstamped += b.n;
    else w.buckets.push([b.ms, b.n]);
  }
  for (const w of windows) w.buckets.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let newestSoFar: number | null = null;
  const samples = windows.slice(0, marks).map((delivery, i) => {
    total += rows[i]!;
    if (newest[i] !== null) newestSoFar = Math.max(newestSoFar ?? 0, newest[i]!);
    return { stored: total, newestSentAtMs: newestSoFar, delivery };
  });
  // the rows after the last mark too: every row of this run the snapshot sees (the file comment's `full` count)
  const newestAll = newest[marks] === null ? newestSoFar : Math.max(newestSoFar ?? 0, newest[marks]!);
  return {
    samples,
    later: windows[marks]!,
    final: { tBefore, tAfter, stored: total + rows[marks]!, newestSentAtMs: newestAll },
  };
}

/** PostgreSQL's timestamp epoch, 2000-01-01, in µs after the Unix epoch (binary timestamptz counts µs from it). */
const PG_EPOCH_US = 946_684_800_000_000;
/** age() of a special xid (invalid, bootstrap, frozen: below 3): PostgreSQL's xid_age gives INT_MAX. */
const AGE_OF_SPECIAL = 2_147_483_647;

/**
 * The settle query's buckets, from the rows of a pass in the settling's snapshot (add(), this run's rows only, as
 * the query's WHERE). Per row, the same arithmetic as the query, in exact integers: the full xid stable − age(xmin)
 * (age: (int32)(stable − xmin), INT_MAX for an xid below 3: PostgreSQL's xid_age), its window by windowOf, and
 * stored_at − sent_at in µs (binary timestamptz: µs from 2000-01-01) rounded to ms half away from zero, as numeric
 * round() does. Full xids are doubles: exact below 2^53 (an xid epoch below 2^21).
 * The window of the last xmin is kept: a batch's rows share it.
 */
export class PassSettler {
  /** windowMap's step function over full xids as doubles */
  private readonly map: { breaks: number[]; windows: number[] };
  private readonly stable: number;
  private readonly stableLow: number;
  private readonly byWindow: Array<{ ms: Map<number, number>; unstamped: number; newestUs: Stamp | null }>;
  private lastXmin = -1;
  private lastWindow = 0;
  /** set by the pass when a row could not be taken: its buckets are then not the settling's */
  abandoned = false;

  /**
   * @param marks the samples' snapshots (pg_snapshot text), in sample order
   * @param stable the settling transaction's stable xid (stableXid)
   * @throws Error a snapshot that does not parse, or an xid of 2^53 or more
   */
  constructor(
    readonly marks: readonly string[],
    stable: bigint,
  ) {
    const map = windowMap(marks.map(parseSnapshot));
    if (stable >= 2n ** 53n) throw new Error(`xid ${stable}: beyond what a double holds exactly`);
    this.map = { breaks: map.breaks.map(Number), windows: map.windows };
    this.stable = Number(stable);
    this.stableLow = Number(stable & 0xffffffffn);
    this.byWindow = Array.from({ length: marks.length + 1 }, () => ({
      ms: new Map<number, number>(),
      unstamped: 0,
      newestUs: null,
    }));
  }

  /**
   * One row of this run: `xmin` its 32-bit xid, `sentUs`/`storedUs` binary timestamptz (µs from 2000-01-01; a bigint
   * beyond 2^53 µs, some 285 years from 2000: ./binary-copy.ts) or null. An infinite stamp ('infinity', '-infinity')
   * is no time: the row counts as unstamped, and an infinite sent_at is not its window's newest (the settle query
   * fails on such a row: its interval arithmetic is out of range).
   */
  add(xmin: number, sentUs: Stamp | null, storedUs: Stamp | null): void {
    if (xmin !== this.lastXmin) {
      const age = xmin < 3 ? AGE_OF_SPECIAL : (this.stableLow - xmin) | 0;
      this.lastWindow = windowOf(this.map, this.stable - age);
      this.lastXmin = xmin;
    }
    const w = this.byWindow[this.lastWindow]!;
    const sent = sentUs === null || infinite(sentUs) ? null : sentUs;
    if (sent !== null && (w.newestUs === null || sent > w.newestUs)) w.newestUs = sent;
    if (sent === null || storedUs === null || infinite(storedUs)) {
      w.unstamped++;
      return;
    }
    let ms: number;
    if (typeof sent === "number" && typeof storedUs === "number") {
      const us = storedUs - sent;
      ms = us >= 0 ? Math.floor((us + 500) / 1000) : -Math.floor((500 - us) / 1000);
    } else {
      const us = BigInt(storedUs) - BigInt(sent); // BigInt division truncates: floor for what is not negative
      ms = Number(us >= 0n ? (us + 500n) / 1000n : -((500n - us) / 1000n));
    }
    w.ms.set(ms, (w.ms.get(ms) ?? 0) + 1);
  }

  /** The settle query's buckets (SettleBucket), newest as epoch ms the way the query's float8 of extract(epoch) × 1000 is. */
  *buckets(): Generator<SettleBucket> {
    for (const [i, w] of this.byWindow.entries()) {
      const newest = w.newestUs === null ? null : epochMs(w.newestUs);
      // the window's newest on its first bucket (settledFrom takes the max over a window's buckets)
      let first = true;
      for (const [ms, n] of w.ms) {
        yield { w: i, ms, n, newest: first ? newest : null };
        first = false;
      }
      if (w.unstamped > 0) yield { w: i, ms: null, n: w.unstamped, newest: first ? newest : null };
    }
  }
}

/** A binary timestamptz: µs from 2000-01-01, a bigint beyond 2^53 (./binary-copy.ts). */
export type Stamp = number | bigint;

/** PostgreSQL's 'infinity' and '-infinity' timestamps: int64's largest and smallest (DT_NOEND, DT_NOBEGIN). */
const INFINITY_US = 2n ** 63n - 1n;
const MINUS_INFINITY_US = -(2n ** 63n);
function infinite(v: Stamp): boolean {
  return typeof v === "bigint" && (v === INFINITY_US || v === MINUS_INFINITY_US);
}

/**
 * Epoch ms of binary timestamptz `us`, the double nearest the exact decimal (what the settle query's
 * `(extract(epoch FROM …) * 1000)::float8` gives): an exact integer divided by 1000 where the sum fits a double
 * exactly, else the decimal text parsed (both correctly rounded).
 */
function epochMs(us: Stamp): number {
  if (typeof us === "number" && Math.abs(us + PG_EPOCH_US) <= Number.MAX_SAFE_INTEGER)
    return (us + PG_EPOCH_US) / 1000;
  const v = BigInt(us) + BigInt(PG_EPOCH_US);
  const abs = v < 0n ? -v : v;
  return Number(`${v < 0n ? "-" : ""}${abs / 1000n}.${String(abs % 1000n).padStart(3, "0")}`);
}
