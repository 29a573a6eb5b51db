// harness/runner/fault-cost.ts on hand-made timelines, series and ledgers: which fault is charged with which missing
// seq range, the pre-fault median, the recovery at sample resolution, the peaks per episode.
import { describe, expect, it } from "vitest";
import type { Ledger } from "../../../core/verifier.ts";
import type { SeriesPoint, TimelineEntry } from "../../../harness/results/types.ts";
import { faultCosts, faultLines, sentTime } from "../../../harness/runner/fault-cost.ts";

const T0 = 1_000_000;

/** One sample per second: t = T0 + 1000·i, the given stored rows/s, 1000 events sent per second, lag as given. */
function series(rates: number[], lags: number[] = []): SeriesPoint[] {
  let stored = 0;
  return rates.map((r, i) => {
    stored += i === 0 ? 0 : r;
    return {
      t: T0 + i * 1000,
      elapsedS: i,
      phase: i === 0 ? "warmup" : "measure",
      stored,
      countQueryMs: 1,
      rowsPerSec: i === 0 ? null : r,
      mibPerSec: null,
      lagMs: lags[i] ?? 100,
      backlogRows: null,
      backlogLagMs: null,
      sent: i * 1000,
      accepted: i * 1000,
      hosts: {},
    } satisfies SeriesPoint;
  });
}

function entry(
  index: number,
  action: string,
  host: string | null,
  startS: number,
  endS: number,
  fault = true,
): TimelineEntry {
  return {
    index,
    name: `${action} ${host}`,
    action,
    host,
    trigger: `at ${startS}s`,
    fault,
    status: "ok",
    startT: T0 + startS * 1000,
    endT: T0 + endS * 1000,
    startS,
    endS,
    exitCode: 0,
    output: "",
  };
}

const ledger = (missingRanges: Array<[number, number, number]>, duplicated = 0): Ledger => ({
  sent: 10_000,
  accepted: 10_000,
  stored: 0,
  distinct: 0,
  lost: missingRanges.reduce((n, [, a, b]) => n + b - a + 1, 0),
  duplicated,
  overwritten: 0,
  rejected: 0,
  unexpected: 0,
  missingRanges,
});

describe("fault costs", () => {
  it("maps a seq to the time it was sent by interpolating the series' sent counts", () => {
    const s = series([0, 1000, 1000, 1000]);
    expect(sentTime(s, 0)).toBe(T0 + 0); // sent 0 at T0, 1000 at T0+1000: seq 0 goes with the first window
    expect(sentTime(s, 1500)).toBe(T0 + 1500);
    expect(sentTime(s, 99_999)).toBe(T0 + 3000); // after the series: its last sample
  });

  it("charges each range to the first fault that ended after it was sent; recovery and peaks per episode", () => {
    // 1000 rows/s until the kill at 4 s, nothing until the restart ends at 6.5 s, 950 rows/s after it
    const s = series(
      [0, 1000, 1000, 1000, 1000, 0, 0, 300, 950, 1000],
      [0, 100, 100, 100, 100, 1100, 2100, 3100, 900, 200],
    );
    const timeline = [
      entry(0, "kill", "collector", 4, 4.01),
      entry(1, "restart", "collector", 5, 6.5),
      entry(2, "cont", "collector", 7, 7.01, false),
    ];
    // seqs 3500..3999 were sent before the kill (in the collector's queue), 5200..5300 during the restart
    const costs = faultCosts(
      timeline,
      s,
      ledger(
        [
          [0, 3500, 3999],
          [0, 5200, 5300],
        ],
        7,
      ),
      1,
    );
    expect(costs.map((c) => c.step)).toEqual([0, 1]); // the cont is no fault
    expect(costs[0]).toMatchObject({
      lost: 500,
      lostRanges: [[0, 3500, 3999]],
      duplicated: null,
      preMedianRowsPerSec: 1000,
    });
    expect(costs[1]).toMatchObject({ lost: 101, lostRanges: [[0, 5200, 5300]] });
    // back to ≥ 900 rows/s in the window that ends at 8 s (the first wholly after 4 s with that rate): 4 s after the kill
    expect(costs[0]!.recoverySeconds).toBe(4);
    // the kill and the restart act on one host: one episode, the kill's peak includes what followed the restart
    expect(costs[0]!.peakLagMs).toBe(3100);
    expect(costs[1]!.recoverySeconds).toBe(3);
  });

  it("a range sent while the killed host was down, before its restart began, is the kill's; one sent during the restart is the restart's", () => {
    const s = series([0, 1000, 1000, 1000, 1000, 0, 0, 300, 950, 1000]);
    const timeline = [entry(0, "kill", "collector", 4, 4.01), entry(1, "restart", "collector", 5, 6.5)];
    // 4100..4199: sent (by the interpolation) at 4.1 s, after the kill ended and before the restart began
    const costs = faultCosts(
      timeline,
      s,
      ledger([
        [0, 4100, 4199],
        [0, 5200, 5300],
      ]),
      1,
    );
    expect(costs[0]).toMatchObject({ lost: 100, lostRanges: [[0, 4100, 4199]] });
    expect(costs[1]).toMatchObject({ lost: 101, lostRanges: [[0, 5200, 5300]] });
    // a restart of another host is no end of the collector's episode: the range goes to the first fault after it
    const other = faultCosts(
      [entry(0, "kill", "collector", 4, 4.01), entry(1, "restart", "sink", 5, 6.5)],
      s,
      ledger([[0, 4100, 4199]]),
      1,
    );
    expect(other.map((c) => c.lost)).toEqual([0, 100]);
  });

  it("a single fault carries the run's duplicates; a fault on another host ends the previous episode's span", () => {
    const s = series([0, 1000, 1000, 0, 1000, 1000, 0, 1000], [0, 100, 100, 2000, 150, 100, 5000, 100]);
    const one = faultCosts([entry(0, "stop", "collector", 2.5, 2.5)], s, ledger([], 3), 1);
    expect(one[0]).toMatchObject({ lost: 0, duplicated: 3, recoverySeconds: 1.5, peakLagMs: 5000 });
    const two = faultCosts(
      [entry(0, "stop", "collector", 2.5, 2.5), entry(1, "restart", "sink", 5.5, 5.6)],
      s,
      ledger([]),
      1,
    );
    expect(two[0]!.peakLagMs).toBe(2000);
    expect(two[1]!.peakLagMs).toBe(5000);
    expect(
      faultLines(two, [entry(0, "stop", "collector", 2.5, 2.5), entry(1, "restart", "sink", 5.5, 5.6)])[0],
    ).toBe(
      "fault stop collector at 2.5 s: lost 0; back to 90 % of 1,000 rows/s after 1.5 s, lag peak 2,000 ms",
    );
  });

  it("never recovered and no pre-fault rate are said as such; no faults: none", () => {
    const s = series([0, 1000, 1000, 0, 0, 0]);
    const c = faultCosts([entry(0, "kill", "collector", 2.5, 2.5)], s, ledger([]), 1);
    expect(c[0]!.recoverySeconds).toBeNull();
    expect(faultLines(c, [entry(0, "kill", "collector", 2.5, 2.5)])[0]).toMatch(
      /not back to 90 % of 1,000 rows\/s during the load/,
    );
    expect(
      faultCosts([entry(0, "kill", "collector", 0.2, 0.2)], s, null, 1)[0]!.preMedianRowsPerSec,
    ).toBeNull();
    expect(faultCosts([entry(0, "exec", "sink", 1, 1, false)], s, ledger([]), 1)).toEqual([]);
  });
});
