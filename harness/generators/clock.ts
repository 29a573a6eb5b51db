/**
 * The clock offset between a generator process (the loadgen host's clock, which stamps sent_at) and the harness,
 * measured before load by an NTP-style exchange of timestamps over the generator's stdio (RFC 5905, §8 "On-Wire
 * Protocol": offset θ = ((t1 − t0) + (t2 − t3)) / 2, round trip δ = (t3 − t0) − (t2 − t1)).
 *
 * t0 and t3 are harness times (epoch ms, performance.timeOrigin + performance.now(), the clock of the verifier's
 * count samples, core/verifier.ts); t1 and t2 are the child's Date.now() at receipt and reply (whole ms). The child
 * read t1 somewhere in [t0, t3] of harness time, so the true offset lies in [t1 − t3, t1 + r − t0] and likewise for
 * t2 (r = the child clock's resolution, 1 ms): each exchange bounds θ to [t2 − t3, t1 + r − t0], an interval of width
 * δ + r centred on the RFC 5905 estimate (shifted by r/2 for the truncation). The intervals of all exchanges are
 * intersected (the exchange takes milliseconds, so drift between them is nil); the offset is the midpoint and the
 * bound its half-width. Should the intersection be empty (a clock stepped mid-exchange), the exchange with the
 * smallest round trip is used alone.
 */

/** One ping/pong: t0 sent and t3 received on the harness clock, t1 received and t2 replied on the child's. */
export interface ClockExchange {
  t0: number;
  t1: number;
  t2: number;
  t3: number;
}

/**
 * The measured offset, or why there is none. Applied to lag as `lag = tCount − (sent_at − offsetMs)`; the lag is then
 * exact to ± boundMs (plus the time the row spent between being stamped and being sent, which is part of the lag).
 */
export type ClockOffset =
  | {
      measured: true;
      /** generator clock − harness clock, ms */
      offsetMs: number;
      /** |true offset − offsetMs| ≤ boundMs, ms */
      boundMs: number;
      /** the smallest round trip of the exchange, ms */
      roundTripMs: number;
      /** exchanges the estimate rests on */
      exchanges: number;
      /** how it was measured, for the record */
      method: string;
    }
  | { measured: false; offsetMs: 0; reason: string };

/** Resolution of the child's clock (Date.now(): whole milliseconds), ms. */
export const CHILD_CLOCK_RESOLUTION_MS = 1;

/** What `method` says in run.json. */
export const CLOCK_METHOD = "NTP-style ping/pong over the generator's stdio before load (RFC 5905 §8), intervals intersected";

/**
 * Offset and bound from a list of exchanges (see the file comment). @throws RangeError on an empty list or an
 * exchange whose times go backwards (t3 < t0 or t2 < t1)
 */
export function estimateOffset(exchanges: readonly ClockExchange[], resolutionMs = CHILD_CLOCK_RESOLUTION_MS): ClockOffset & { measured: true } {
  if (exchanges.length === 0) throw new RangeError("estimateOffset: no exchanges");
  let lo = -Infinity;
  let hi = Infinity;
  let best: ClockExchange | undefined;
  let bestDelay = Infinity;
  for (const e of exchanges) {
    if (e.t3 < e.t0 || e.t2 < e.t1) throw new RangeError(`estimateOffset: times go backwards in ${JSON.stringify(e)}`);
    lo = Math.max(lo, e.t2 - e.t3);
    hi = Math.min(hi, e.t1 + resolutionMs - e.t0);
    const delay = (e.t3 - e.t0) - (e.t2 - e.t1);
    if (delay < bestDelay) { bestDelay = delay; best = e; }
  }
  if (lo > hi) {
    lo = best!.t2 - best!.t3;
    hi = best!.t1 + resolutionMs - best!.t0;
  }
  return {
    measured: true, offsetMs: (lo + hi) / 2, boundMs: (hi - lo) / 2, roundTripMs: Math.max(0, bestDelay),
    exchanges: exchanges.length, method: CLOCK_METHOD,
  };
}

/** The tightest of several processes' offsets on one host (the same clock), or the first failure when none measured. */
export function bestOffset(offsets: readonly ClockOffset[]): ClockOffset {
  const measured = offsets.filter((o): o is ClockOffset & { measured: true } => o.measured);
  if (measured.length === 0) return offsets[0] ?? { measured: false, offsetMs: 0, reason: "no generator process" };
  return measured.reduce((a, b) => (b.boundMs < a.boundMs ? b : a));
}
