// Ctrl-C during a completion check that takes minutes (the old SQL gaps query over 18M rows under a quarter-core cap
// held a soak run's SIGINT for over three minutes): the wait must end at once with E_INTERRUPTED, whatever the query.
import { describe, expect, it } from "vitest";
import { untilAborted } from "../../../core/errors.ts";
import { awaitCompletion } from "../../../harness/runner/completion.ts";
import type { Completion, CountSample } from "../../../core/verifier.ts";

const sample = (stored: number): CountSample => ({ tBefore: 0, tAfter: 0, stored, newestSentAtMs: null });
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

describe("aborting a completion wait (harness/runner/completion.ts, core/errors.ts untilAborted)", () => {
  it("a completion query that never returns: the wait rejects with E_INTERRUPTED as soon as the signal aborts", async () => {
    const ac = new AbortController();
    let checks = 0;
    const wait = awaitCompletion({
      tick: async () => sample(100),
      completion: () => {
        checks++;
        return never<Completion>();
      },
      accepted: 100,
      expected: 100,
      previous: sample(0),
      intervalMs: 50,
      tighten: false,
      timeoutMs: 600_000,
      checkAbort: () => undefined,
      signal: ac.signal,
    });
    setTimeout(() => ac.abort("SIGINT"), 30);
    const t0 = performance.now();
    await expect(wait).rejects.toMatchObject({
      code: "E_INTERRUPTED",
      message: expect.stringContaining("SIGINT"),
    });
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(checks).toBe(1);
  });

  it("a count sample that never returns is cut short the same way; a settled promise passes through", async () => {
    const ac = new AbortController();
    const wait = awaitCompletion({
      tick: () => never<CountSample>(),
      completion: async () => ({ tBefore: 0, tAfter: 0, missing: 0, missingRanges: [] }),
      accepted: 1,
      expected: 1,
      previous: sample(0),
      intervalMs: 50,
      tighten: false,
      timeoutMs: 600_000,
      checkAbort: () => undefined,
      signal: ac.signal,
    });
    ac.abort("SIGTERM");
    await expect(wait).rejects.toMatchObject({ code: "E_INTERRUPTED" });
    await expect(untilAborted(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    await expect(
      untilAborted(Promise.reject(new Error("query failed")), new AbortController().signal),
    ).rejects.toThrow("query failed");
    await expect(untilAborted(never(), AbortSignal.abort("SIGINT"))).rejects.toMatchObject({
      code: "E_INTERRUPTED",
    });
  });
});
