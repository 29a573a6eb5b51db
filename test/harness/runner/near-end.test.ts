// When a fixed workload's sampling tightens (harness/runner/completion.ts nearEnd): within the last 5 % of its rows
// and within 2 s of its end at the load's mean rate, so a long load tightens for its last seconds, not its last 5 %.
import { describe, expect, it } from "vitest";
import { NEAR_END_SECONDS, NEAR_END_SHARE, nearEnd } from "../../../harness/runner/completion.ts";

describe("nearEnd (fixed workload sampling)", () => {
  it("a 60 GiB replay's 322M rows at 187k rows/s tightens for its last 2 s, not its last 86 s", () => {
    const expected = 322_128_000;
    const rate = 187_244; // rows/s
    const at = (secondsLeft: number) => {
      const stored = expected - rate * secondsLeft;
      return nearEnd(stored, expected, (stored / rate) * 1000);
    };
    expect(at(86)).toBe(false); // within the last 5 % (16M rows), 86 s from the end
    expect(at(NEAR_END_SECONDS + 0.5)).toBe(false);
    expect(at(NEAR_END_SECONDS - 0.5)).toBe(true);
    expect(at(0)).toBe(true);
  });

  it("a small workload tightens from its last 5 %, which is then less than 2 s away", () => {
    // 100,000 rows at 40,000 rows/s: the last 5 % is 0.125 s
    expect(nearEnd(NEAR_END_SHARE * 100_000 - 1, 100_000, 2_400)).toBe(false);
    expect(nearEnd(NEAR_END_SHARE * 100_000, 100_000, 2_375)).toBe(true);
  });

  it("no rate yet (nothing elapsed) falls back to the share alone", () => {
    expect(nearEnd(99, 100, 0)).toBe(true);
    expect(nearEnd(90, 100, 0)).toBe(false);
  });
});
