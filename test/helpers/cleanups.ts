/**
 * A per-test cleanup list: `cleanups.push(fn)` in a test, run in reverse order after each test (also after a
 * failure); every cleanup runs even when one throws, and the errors are reported together.
 */
import { afterEach } from "vitest";

/** Register the afterEach hook in the calling test file and return its list. */
export function useCleanups(): Array<() => Promise<unknown>> {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    const errors: unknown[] = [];
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length) throw new AggregateError(errors, "cleanup failed");
  });
  return cleanups;
}
