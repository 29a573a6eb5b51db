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

import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

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
export const CLOCK_METHOD =
  "NTP-style ping/pong over the generator's stdio before load (RFC 5905 §8), intervals intersected";

/**
 * Offset and bound from a list of exchanges (see the file comment). @throws RangeError on an empty list or an
 * exchange whose times go backwards (t3 < t0 or t2 < t1)
 */
export function estimateOffset(
  exchanges: readonly ClockExchange[],
  resolutionMs = CHILD_CLOCK_RESOLUTION_MS,
): ClockOffset & { measured: true } {
  if (exchanges.length === 0) throw new RangeError("estimateOffset: no exchanges");
  let lo = -Infinity;
  let hi = Infinity;
  let best: ClockExchange | undefined;
  let bestDelay = Infinity;
  for (const e of exchanges) {
    if (e.t3 < e.t0 || e.t2 < e.t1)
      throw new RangeError(`estimateOffset: times go backwards in ${JSON.stringify(e)}`);
    lo = Math.max(lo, e.t2 - e.t3);
    hi = Math.min(hi, e.t1 + resolutionMs - e.t0);
    const delay = e.t3 - e.t0 - (e.t2 - e.t1);
    if (delay < bestDelay) {
      bestDelay = delay;
      best = e;
    }
  }
  if (lo > hi) {
    lo = best!.t2 - best!.t3;
    hi = best!.t1 + resolutionMs - best!.t0;
  }
  return {
    measured: true,
    offsetMs: (lo + hi) / 2,
    boundMs: (hi - lo) / 2,
    roundTripMs: Math.max(0, bestDelay),
    exchanges: exchanges.length,
    method: CLOCK_METHOD,
  };
}

/** The tightest of several processes' offsets on one host (the same clock), or the first failure when none measured. */
export function bestOffset(offsets: readonly ClockOffset[]): ClockOffset {
  const measured = offsets.filter((o): o is ClockOffset & { measured: true } => o.measured);
  if (measured.length === 0)
    return offsets[0] ?? { measured: false, offsetMs: 0, reason: "no generator process" };
  return measured.reduce((a, b) => (b.boundMs < a.boundMs ? b : a));
}

/** The reply loop a host's shell runs for `measureHostClock`: one `date` in epoch ms (GNU date's %3N) per line read. */
export const HOST_CLOCK_LOOP = "while IFS= read -r _; do date +%s%3N; done";

/** What `method` says in run.json for a host clock measured through its shell. */
export const HOST_CLOCK_METHOD = `NTP-style exchange through the host's shell before load (RFC 5905 §8; one \`date +%s%3N\` per ping, t1 = t2), intervals intersected`;

/**
 * Measure a host's clock against the harness through a process that answers each line on its stdin with that host's
 * epoch time in whole ms (`sh -c HOST_CLOCK_LOOP` started by `spawnFn`, e.g. a deployed host's `docker exec` or ssh).
 * The host reads its clock once per ping, so t1 = t2 and each exchange bounds the offset to [t1 − t3, t1 + r − t0],
 * as for a generator (file comment). `exchanges` run one after the other; `timeoutMs` bounds each reply (the first
 * includes the shell's start). Never throws: a shell that cannot start, exits, answers what is not a number (e.g.
 * a date without %N) or does not answer gives `{ measured: false, reason }`. The process is ended before this returns (stdin
 * closed, which ends the loop; SIGKILL of the local client after 2 s if it is still there).
 */
export async function measureHostClock(
  spawnFn: (command: string, args: string[]) => ChildProcess,
  exchanges = 8,
  timeoutMs = 10_000,
): Promise<ClockOffset> {
  const now = (): number => performance.timeOrigin + performance.now();
  let child: ChildProcess;
  try {
    child = spawnFn("sh", ["-c", HOST_CLOCK_LOOP]);
  } catch (e) {
    return { measured: false, offsetMs: 0, reason: `cannot start the host's shell: ${(e as Error).message}` };
  }
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let ended = false;
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  if (child.stdout)
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
      lines.push(line.trim());
      wake();
    });
  const gone = (): void => {
    ended = true;
    wake();
  };
  child.on("exit", gone);
  child.on("error", gone);
  child.stdin?.on("error", () => undefined);
  const reply = (): Promise<{ line: string; t3: number } | null> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      const check = (): void => {
        if (lines.length > 0) {
          clearTimeout(timer);
          resolve({ line: lines.shift()!, t3: now() });
          return;
        }
        if (ended) {
          clearTimeout(timer);
          resolve(null);
          return;
        }
        waiters.push(check);
      };
      check();
    });
  const got: ClockExchange[] = [];
  let failure: string | undefined;
  try {
    for (let i = 0; i < exchanges; i++) {
      const t0 = now();
      child.stdin?.write("\n");
      const r = await reply();
      if (!r) {
        failure = ended
          ? "the host's shell exited before answering"
          : `the host's shell did not answer within ${timeoutMs} ms`;
        break;
      }
      const t1 = Number(r.line);
      if (!/^\d{10,}$/.test(r.line) || !Number.isSafeInteger(t1)) {
        failure = `the host's date answered ${JSON.stringify(r.line.slice(0, 40))}, not epoch milliseconds (needs GNU date's %3N)`;
        break;
      }
      got.push({ t0, t1, t2: t1, t3: r.t3 });
    }
  } finally {
    // the loop ends on stdin EOF (its read fails); the local client is killed only if it has not gone within 2 s
    child.stdin?.end();
    if (child.exitCode === null && child.signalCode === null && !ended) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve();
        }, 2000);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
  if (got.length === 0) return { measured: false, offsetMs: 0, reason: failure ?? "no exchange" };
  return { ...estimateOffset(got), method: HOST_CLOCK_METHOD };
}

/**
 * The correction that moves a stored_at (sink clock) onto the generator's clock for delivery latency, ms: the sink's
 * offset minus the loadgen's (both against the harness), with the bound of the difference (the bounds add). Delivery
 * latency = (stored_at − sent_at) − correctionMs. Null when either offset was not measured.
 */
export function sinkCorrection(
  sink: ClockOffset,
  loadgen: ClockOffset,
): { correctionMs: number; boundMs: number } | null {
  if (!sink.measured || !loadgen.measured) return null;
  return { correctionMs: sink.offsetMs - loadgen.offsetMs, boundMs: sink.boundMs + loadgen.boundMs };
}
