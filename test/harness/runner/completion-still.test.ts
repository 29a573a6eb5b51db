// The completion wait where the live count lags what is committed (harness/runner/completion.ts checkWhenStill;
// PostgreSQL's insert counter, which an idle writer such as syslog-ng's open connection reports only 10 s after its
// last report): the check runs once the count has stood still for STILL_MS since it moved and since the last check,
// doubling that time after each such check that did not end the wait, and its own count (Completion.stored) decides
// whether the deliberate repeats are there. Fed with
// scripted samples and checks; the assertions are on which checks ran and what the wait answered, and on lower
// bounds of time only.
import { describe, expect, it } from "vitest";
import type { Completion, CountSample } from "../../../core/verifier.ts";
import { awaitCompletion, STILL_MS, type CompletionWaitInput } from "../../../harness/runner/completion.ts";

const sample = (stored: number): CountSample => ({ tBefore: 0, tAfter: 0, stored, newestSentAtMs: null });
const answer = (missing: number, stored?: number): Completion => ({
  tBefore: 0,
  tAfter: 0,
  missing,
  missingRanges: [],
  ...(stored === undefined ? {} : { stored }),
});

/** A wait whose live count reads `counts()` and whose check answers `check(n)` for the count n it ran at. */
function wait(o: {
  counts: () => number;
  check: (atCount: number) => Completion;
  still?: boolean;
  expected?: number;
  timeoutMs?: number;
}) {
  const checks: number[] = [];
  let last = 0;
  const input: CompletionWaitInput = {
    tick: async () => sample((last = o.counts())),
    completion: async () => {
      checks.push(last);
      return o.check(last);
    },
    accepted: 1000,
    expected: o.expected ?? 1000,
    previous: sample(0),
    intervalMs: 50,
    tighten: false,
    timeoutMs: o.timeoutMs ?? 8000,
    checkAbort: () => undefined,
    checkWhenStill: o.still,
  };
  return { checks, done: awaitCompletion(input) };
}

describe("the completion wait with a lagging live count (checkWhenStill)", () => {
  it("checks once the count has stood still below what was acknowledged, and is complete on the check's word", async () => {
    const t0 = performance.now();
    const w = wait({ counts: () => 900, check: () => answer(0, 1000), still: true, timeoutMs: 30_000 });
    const r = await w.done;
    expect(r.outcome).toBe("complete");
    expect(w.checks).toEqual([900]);
    // ended on that check, not at the timeout (whose own check would answer the same)
    expect(r.waitedMs).toBeLessThan(30_000);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(STILL_MS - 50);
  });

  it("without it the same count is never checked before the timeout", async () => {
    const w = wait({ counts: () => 900, check: () => answer(0, 1000), timeoutMs: STILL_MS + 1500 });
    const r = await w.done;
    expect(r.waitedMs).toBeGreaterThanOrEqual(STILL_MS + 1500);
    // only the timeout's own check, at the end
    expect(w.checks).toEqual([900]);
    expect(r.samples.length).toBeGreaterThan(10);
  });

  it("after a check that finds rows missing, the next waits twice as long from the count's last move", async () => {
    const t0 = performance.now();
    // 900 for 2.6 s (rows still missing at its check), then 950 (all there): checked at 2 s, then 4 s after 2.6 s
    const w = wait({
      counts: () => (performance.now() - t0 < STILL_MS + 600 ? 900 : 950),
      check: (n) => answer(n === 900 ? 100 : 0, n === 900 ? 900 : 1000),
      still: true,
      timeoutMs: 30_000,
    });
    const r = await w.done;
    expect(r.outcome).toBe("complete");
    expect(w.checks).toEqual([900, 950]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(STILL_MS + 600 + 2 * STILL_MS - 50);
  });

  it("a count that never moves while the rows commit is checked again, later each time (the counter lags, the rows do not)", async () => {
    const t0 = performance.now();
    let n = 0;
    const w = wait({
      counts: () => 900,
      check: () => (++n === 1 ? answer(100, 900) : answer(0, 1000)),
      still: true,
      timeoutMs: 30_000,
    });
    const r = await w.done;
    expect(r.outcome).toBe("complete");
    expect(w.checks).toEqual([900, 900]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(3 * STILL_MS - 50);
  });

  it("a live count that runs ahead (aborted rows counted) does not end the wait: the check's own count decides", async () => {
    const w = wait({
      counts: () => 1100,
      check: () => answer(0, 1000),
      expected: 1100,
      timeoutMs: STILL_MS + 500,
      still: true,
    });
    const r = await w.done;
    // the count said done once; the check counted 1,000 of the 1,100 rows expected, so the wait went on to the timeout
    expect(r.waitedMs).toBeGreaterThanOrEqual(STILL_MS + 500);
    expect(w.checks[0]).toBe(1100);
  });

  it("the check's own count must hold the deliberate repeats: missing 0 with fewer rows than expected waits on to the timeout", async () => {
    const w = wait({
      counts: () => 900,
      check: () => answer(0, 1000),
      still: true,
      expected: 1100,
      timeoutMs: STILL_MS + 1000,
    });
    const r = await w.done;
    // checked when still, and again at the timeout (a lagging count may hide rows committed since)
    expect(w.checks).toEqual([900, 900]);
    // the timeout's answer by the same rule as inside the loop: nothing missing, but the repeats are not all there
    expect(r.outcome).toBe("timeout");
    expect(r.missing).toBe(0);
    expect(r.waitedMs).toBeGreaterThanOrEqual(STILL_MS + 1000);
  });
});
