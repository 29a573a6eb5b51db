/**
 * The wait for seq completion (core/ledger.ts, "Seq completion"; docs/design.md, "Rules for the numbers"): after the
 * load, sample until every acknowledged seq of every generator is at the sink, or until the timeout.
 *
 * Each round takes one timed count sample (the caller's `tick`); once the count reaches `accepted` (a necessary
 * condition) and has changed since the last check, the verifier's missing-range query (`completion`) decides. Where
 * the live count lags what is committed (`checkWhenStill`: Verifier.liveCountLags, PostgreSQL's insert counter, which
 * an idle writer reports only 10 s after its last report), the check also runs once the count has stood still for
 * STILL_MS since it last moved and since the last check, whatever the count: through syslog-ng the drain waited
 * those 10 s for the counter. Each such check that does not end the wait doubles that time (a collector still
 * flushing is not read in full every 2 s), and the timeout checks again even at an unchanged count. The wait is
 * complete when nothing acknowledged is missing and the rows counted hold the deliberate repeats too (`expected`):
 * the check's own count where it gives one (Completion.stored: a lagging live count can also run ahead, counting
 * aborted rows), else the sample's.
 * Counts alone are never the verdict: one lost row plus one duplicate has the count of a complete run, and rows
 * stored but rejected, or retry duplicates, reach it early.
 *
 * Where the wait ends the window (a fixed workload): the window ends at the sample that first saw the workload
 * complete or, at the timeout, at the first sample that saw the final count (the last arrival), never at the
 * timeout (`windowEnd`). Once the count is within NEAR_END_SHARE of `expected` and still moving (a change within the last
 * STALL_MS), samples are TIGHT_INTERVAL_MS apart, so the window error (the width of the interval that holds the
 * true end: from the query start of the sample before the end sample to the end of the query that confirmed it)
 * is a few tens of ms, and stated.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { untilAborted } from "../../core/errors.ts";
import type { Completion, CountSample } from "../../core/verifier.ts";

/** Sampling interval near the end of a fixed workload, ms. */
export const TIGHT_INTERVAL_MS = 15;
/** Share of the expected rows from which sampling tightens. */
export const NEAR_END_SHARE = 0.95;
/** How close to its end, in seconds at the load's mean rate so far, a fixed workload's sampling tightens. */
export const NEAR_END_SECONDS = 2;

/**
 * Whether a fixed workload of `expected` rows is near its end after `stored` rows in `elapsedMs` since the load
 * began: within NEAR_END_SHARE of it, and at most NEAR_END_SECONDS from it at the mean rate so far. The share alone
 * tightened for the last 5 % of any size: on a very large replay that was over a minute of
 * samples a few ms apart, each a query at the sink and a series point (docs/measurements.md, "Figures moved from code
 * comments").
 */
export function nearEnd(stored: number, expected: number, elapsedMs: number): boolean {
  if (stored < NEAR_END_SHARE * expected) return false;
  const rate = elapsedMs > 0 ? stored / elapsedMs : 0; // rows per ms
  return rate <= 0 || expected - stored <= rate * NEAR_END_SECONDS * 1000;
}

/** A count unchanged this long is no longer "moving": sampling falls back to the run's interval, ms. */
export const STALL_MS = 1000;

/**
 * A lagging live count (`checkWhenStill`) unchanged this long below `accepted` has the check run, ms: longer than
 * the once-a-second reports of a writer still writing (PostgreSQL's PGSTAT_MIN_INTERVAL), so a count that only
 * waits for its next report is not taken for one that stopped.
 */
export const STILL_MS = 2000;

export interface CompletionWaitInput {
  /** one timed count sample (the caller records it as a series point) */
  tick: () => Promise<CountSample>;
  /** the verifier's missing-range query (core/verifier.ts completionOf) */
  completion: () => Promise<Completion>;
  /** acknowledged seqs (sent − rejected), summed over generators */
  accepted: number;
  /** rows the sink should hold: accepted plus deliberate repeats */
  expected: number;
  /** the last sample before the wait */
  previous: CountSample;
  /** interval between samples when not near the end, ms */
  intervalMs: number;
  /** tighten near the end (a fixed workload, whose window the wait ends) */
  tighten: boolean;
  /** the live count can lag what is committed (Verifier.liveCountLags): check once it stands still (file comment) */
  checkWhenStill?: boolean;
  timeoutMs: number;
  /** throws when the run was aborted */
  checkAbort: () => void;
  signal?: AbortSignal;
}

export interface CompletionWait {
  outcome: "complete" | "timeout";
  missing: number;
  missingRanges: Array<[number, number, number]>;
  /** the wait's samples, in order */
  samples: CountSample[];
  waitedMs: number;
}

const now = (): number => performance.timeOrigin + performance.now();

/** Wait for completion (see the file comment). Rejects with the caller's abort error, or a verifier's. */
export async function awaitCompletion(input: CompletionWaitInput): Promise<CompletionWait> {
  const start = now();
  const deadline = start + input.timeoutMs;
  const samples: CountSample[] = [];
  let prev = input.previous;
  let lastChange = start;
  let checkedAt = -1; // the count the last completion query was run at
  let lastCheckAt = start;
  let stillMs = STILL_MS;
  let last: Completion | null = null;
  for (;;) {
    const s = await untilAborted(input.tick(), input.signal);
    samples.push(s);
    if (s.stored !== prev.stored) lastChange = now();
    const countSaysDone = s.stored >= input.accepted && s.stored !== checkedAt;
    const still =
      input.checkWhenStill === true && !countSaysDone && now() - Math.max(lastChange, lastCheckAt) >= stillMs;
    if (countSaysDone || still) {
      checkedAt = s.stored;
      last = await untilAborted(input.completion(), input.signal);
      lastCheckAt = now();
      if (last.missing === 0 && (last.stored ?? s.stored) >= input.expected)
        return { outcome: "complete", missing: 0, missingRanges: [], samples, waitedMs: now() - start };
      if (still) stillMs *= 2;
    }
    if (now() >= deadline) break;
    const tight =
      input.tighten && s.stored >= NEAR_END_SHARE * input.expected && now() - lastChange < STALL_MS;
    await sleep(
      Math.max(0, Math.min(tight ? TIGHT_INTERVAL_MS : input.intervalMs, deadline - now())),
      undefined,
      { signal: input.signal },
    ).catch(() => undefined);
    input.checkAbort();
    prev = s;
  }
  // the timeout: what is missing now
  // (a lagging count may not have moved while rows committed: then always)
  if (!last || checkedAt !== samples.at(-1)!.stored || input.checkWhenStill === true)
    last = await untilAborted(input.completion(), input.signal);
  // complete as inside the loop: nothing acknowledged missing, and the rows counted hold the deliberate repeats
  const held = last.stored ?? samples.at(-1)!.stored;
  return {
    outcome: last.missing === 0 && held >= input.expected ? "complete" : "timeout",
    missing: last.missing,
    missingRanges: last.missingRanges,
    samples,
    waitedMs: now() - start,
  };
}

/** A sample point as the window end needs it (harness/results/types.ts SeriesPoint). */
export interface WindowPoint {
  /** query midpoint, epoch ms */
  t: number;
  countQueryMs: number;
  stored: number;
}

/**
 * Where a fixed workload's window ends, given its measurement points in order (`points[0]` the opening sample) and
 * the count it ended with (the completion sample's, or at a timeout the largest seen): the first point that saw
 * that count. Rows are only added during a run, so the first point with the final count saw the final set: the
 * last arrival lies between the query start of the point before it and its query end (`windowErrorMs`).
 * Returns the index in `points`, or −1 when no point has the count.
 */
export function windowEnd(
  points: readonly WindowPoint[],
  finalStored: number,
): { index: number; windowErrorMs: number | null } {
  const index = points.findIndex((p) => p.stored === finalStored);
  if (index < 0) return { index, windowErrorMs: null };
  const end = points[index]!;
  const before = index > 0 ? points[index - 1]! : null;
  return {
    index,
    windowErrorMs: before ? end.t + end.countQueryMs / 2 - (before.t - before.countQueryMs / 2) : null,
  };
}
