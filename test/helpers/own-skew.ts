/**
 * This process's wall clock minus its harness clock (performance.timeOrigin + performance.now(), the clock the
 * offsets of harness/generators/clock.ts are measured against), ms. A clock read on this machine (a generator child's
 * Date.now(), a shell's `date +%s%3N`) measures this as its offset, not 0: the two part when the system clock is
 * stepped after the process started (a VM resumed from a pause steps CLOCK_REALTIME forward, while CLOCK_MONOTONIC,
 * which performance.now() reads, does not move), and a test worker lives for the whole suite. Date.now() is whole
 * milliseconds, so the value lies in (true skew − 1, true skew].
 */
export function ownClockSkewMs(): number {
  return Date.now() - (performance.timeOrigin + performance.now());
}
