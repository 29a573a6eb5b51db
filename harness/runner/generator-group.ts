/**
 * The generators of one run: `processes` generator processes (the generator config's field, default 1) per entry
 * point (the sink, or each collector host of a scale-out stack), all on the loadgen host; entry e's processes are
 * genIds e·processes .. e·processes + processes − 1, each with its own seq space 0, 1, 2, ... and its share of the
 * entry's load (splitConfig). Progress and the final report are the sums over the processes; the ledger gets what
 * each genId sent, so its meaning does not change with the number of processes.
 */
import { ConfigurationError } from "../../core/errors.ts";
import type { GeneratorProcess, GeneratorProgram, GeneratorSpec, SpawnFn } from "../generators/process.ts";
import { startGeneratorProcess } from "../generators/process.ts";
import { widestIndex, type ReplayIndexJson } from "../../core/events/replay-index.ts";
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import { bestOffset, type ClockOffset } from "../generators/clock.ts";

const ZERO: GeneratorProgress = { sent: 0, accepted: 0, rejected: 0, bytes: 0, requests: 0, repeated: 0 };

/**
 * Field-wise sum of running totals (`repeated` counts as 0 where absent); `logBytes` is present when any of them
 * carries it (a process that has not reported yet counts 0).
 */
export function sumProgress(list: readonly GeneratorProgress[]): GeneratorProgress {
  return list.reduce<GeneratorProgress>(
    (a, p) => ({
      sent: a.sent + p.sent,
      accepted: a.accepted + p.accepted,
      rejected: a.rejected + p.rejected,
      bytes: a.bytes + p.bytes,
      requests: a.requests + p.requests,
      repeated: (a.repeated ?? 0) + (p.repeated ?? 0),
      ...(a.logBytes !== undefined || p.logBytes !== undefined
        ? { logBytes: (a.logBytes ?? 0) + (p.logBytes ?? 0) }
        : {}),
    }),
    { ...ZERO },
  );
}

/**
 * Mean bytes of the log line per row sent (GeneratorProgress.logBytes ÷ (sent + repeated), as the wire bytes per row
 * are taken: harness/runner/run.ts): what write-up 004 reads as the file's bytes. Null when the totals carry no log
 * bytes (an application under test, a `generator: none` run, an older generator) or nothing was sent yet.
 */
export function logBytesPerRowOf(p: GeneratorProgress | undefined): number | null {
  const rows = p ? p.sent + (p.repeated ?? 0) : 0;
  return p?.logBytes === undefined || rows === 0 ? null : p.logBytes / rows;
}

/**
 * One report for several generators: totals summed; latency mean weighted by requests, p50 the requests-weighted mean
 * of the p50s (an approximation, marked as such when n > 1), p99 and max the largest; errors prefixed by genId.
 * With one generator, that generator's report unchanged. @throws Error on an empty list
 */
export function mergeFinals(finals: readonly GeneratorFinal[]): GeneratorFinal {
  if (finals.length === 0) throw new Error("mergeFinals: no generator reports");
  if (finals.length === 1) return finals[0]!;
  const totals = sumProgress(finals);
  const weight = (f: GeneratorFinal): number =>
    totals.requests > 0 ? f.requests / totals.requests : 1 / finals.length;
  return {
    ...totals,
    genId: -1,
    rejectedRanges: [],
    latencyMs: {
      mean: finals.reduce((s, f) => s + f.latencyMs.mean * weight(f), 0),
      p50: finals.reduce((s, f) => s + f.latencyMs.p50 * weight(f), 0),
      p99: Math.max(...finals.map((f) => f.latencyMs.p99)),
      max: Math.max(...finals.map((f) => f.latencyMs.max)),
    },
    errors: finals.flatMap((f) => f.errors.map((e) => `gen ${f.genId}: ${e}`)),
  };
}

/**
 * The generators' index of the replay file (the widest, core/events/replay-index.ts), taken out of their reports
 * (`finals` are changed): it serves the content check and is no part of the run's record. Undefined without a replay.
 */
export function takeReplayIndex(finals: readonly GeneratorFinal[]): ReplayIndexJson | undefined {
  const index = widestIndex(finals.map((f) => f.replayIndex));
  for (const f of finals) delete f.replayIndex;
  return index;
}

/** Generator processes per entry point: the config's `processes` (loop.ts batchLoopFields), 1 when absent. */
export function processesOf(config: Record<string, unknown>): number {
  return typeof config.processes === "number" ? config.processes : 1;
}

/**
 * The configs of the `n` processes sharing one entry point's load: a numeric `rate` (events/s) divided by n; a fixed
 * `requests` workload R split as floor(R/n), with the first R mod n processes taking one more (the total stays R);
 * every other field as given. Process k's config is element k. n = 1 gives the config unchanged.
 * @throws ConfigurationError E_GENERATOR_PROCESSES when `requests` is smaller than n (a process would have nothing to send)
 */
export function splitConfig(config: Record<string, unknown>, n: number): Array<Record<string, unknown>> {
  if (n === 1) return [config];
  const requests = config.requests;
  if (typeof requests === "number" && requests < n) {
    throw new ConfigurationError(
      "E_GENERATOR_PROCESSES",
      `generator processes ${n} exceed its requests ${requests}: every process needs at least one request`,
      { field: "generator.processes" },
    );
  }
  return Array.from({ length: n }, (_, k) => ({
    ...config,
    ...(typeof config.rate === "number" ? { rate: config.rate / n } : {}),
    ...(typeof requests === "number"
      ? { requests: Math.floor(requests / n) + (k < requests % n ? 1 : 0) }
      : {}),
  }));
}

/**
 * What a run (./run.ts) drives its load through: the generator processes (GeneratorGroup), or an application under
 * test in their place (./app-host.ts AppRun).
 */
export type LoadGroup = Pick<
  GeneratorGroup,
  "ready" | "syncClock" | "go" | "progress" | "backlog" | "whenFinished" | "finished" | "stop"
> &
  Partial<Pick<GeneratorGroup, "logBytesPerRowAt">>;

/** What each generator targets: the spec for genId i is `specFor(i)`. */
export class GeneratorGroup {
  private readonly procs: GeneratorProcess[];
  private readonly latest: GeneratorProgress[];
  private finishedCount = 0;
  /** harness receipt time (epoch ms) and rows acknowledged then (accepted + repeated, summed), one per progress line */
  private readonly ackTimes: number[] = [];
  private readonly ackRows: number[] = [];
  /** the summed totals' log bytes per row (logBytesPerRowOf) at each of those lines, null before any is known */
  private readonly logPerRow: Array<number | null> = [];

  /** Start `n` generator processes through `spawn` (the loadgen host's), genIds 0..n-1, running `program` (default: local child.ts). */
  constructor(
    spawn: SpawnFn,
    n: number,
    specFor: (genId: number) => GeneratorSpec,
    program?: GeneratorProgram,
  ) {
    this.procs = Array.from({ length: n }, (_, i) => startGeneratorProcess(spawn, specFor(i), program));
    this.latest = this.procs.map(() => ({ ...ZERO }));
    this.procs.forEach((p, i) => {
      p.on("progress", (line: GeneratorProgress) => {
        this.latest[i] = line;
        const total = sumProgress(this.latest);
        this.ackTimes.push(performance.timeOrigin + performance.now());
        this.ackRows.push(total.accepted + (total.repeated ?? 0));
        this.logPerRow.push(logBytesPerRowOf(total));
      });
      p.on("error", () => {
        /* surfaced by stop() */
      });
      void p.finished.then(() => {
        this.finishedCount++;
      });
    });
  }

  /** Resolves once every generator process is ready to send (or has exited), or when `signal` aborts. */
  async ready(signal?: AbortSignal): Promise<void> {
    // the run's signal outlives this cell: the listener goes when the wait ends, so a 12-cell sweep does not pile up
    // abort listeners on it (Node's MaxListenersExceededWarning)
    let onAbort: () => void = () => undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      if (signal?.aborted) resolve();
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([Promise.all(this.procs.map((p) => p.ready)), aborted]);
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * The clock offset of the loadgen host (generator − harness, ms), measured with every process (all started with
   * `clockSync: true`) before any load; the tightest bound wins (they share one clock). Call after `ready()`, then `go()`.
   */
  async syncClock(): Promise<ClockOffset> {
    return bestOffset(await Promise.all(this.procs.map((p) => p.syncClock())));
  }

  /** Start the load of every process held for the clock sync. */
  go(): void {
    for (const p of this.procs) p.go();
  }

  /**
   * The backlog behind a count of `stored` rows taken at harness time `at` (epoch ms), from the acknowledgements seen
   * so far: `rows` = acknowledged − stored, and `ageMs` = `at` − the time the harness first saw more than `stored` rows
   * acknowledged. Both are lower bounds on the rows missing and on the age of the oldest acknowledged row not yet
   * stored: that row was acknowledged before the progress line announcing it reached the harness, and duplicate or
   * foreign rows only raise `stored`. Null when nothing acknowledged is missing.
   */
  backlog(stored: number, at: number): { rows: number; ageMs: number } | null {
    // the acknowledgements the harness had seen by `at` (lines arrive in time order; the totals never decrease)
    const seen = firstIndex(this.ackTimes.length, (i) => this.ackTimes[i]! > at);
    if (seen === 0 || this.ackRows[seen - 1]! <= stored) return null;
    const first = firstIndex(seen, (i) => this.ackRows[i]! > stored);
    return { rows: this.ackRows[seen - 1]! - stored, ageMs: Math.max(0, at - this.ackTimes[first]!) };
  }

  /**
   * Mean log bytes per row sent (logBytesPerRowOf) in the totals the harness had seen by `at` (epoch ms; Infinity:
   * the latest), the figure a sample at `at` multiplies its rows/s by (SeriesPoint.logMibPerSec). Null before any
   * progress line, or when the generators count no log bytes.
   */
  logBytesPerRowAt(at: number): number | null {
    const seen = firstIndex(this.ackTimes.length, (i) => this.ackTimes[i]! > at);
    return seen === 0 ? null : this.logPerRow[seen - 1]!;
  }

  /** running totals over all generators */
  get progress(): GeneratorProgress {
    return sumProgress(this.latest);
  }

  /** Resolves once every generator has reported its final totals or exited (see `finished`). */
  whenFinished(): Promise<void> {
    return Promise.all(this.procs.map((p) => p.finished)).then(() => undefined);
  }

  /** true once every generator has reported its final totals or exited (a fixed `requests` workload is done, or all failed) */
  get finished(): boolean {
    return this.finishedCount === this.procs.length;
  }

  /**
   * Stop all (graceful, then SIGKILL after the process module's timeout) and return each final report, by genId.
   * @throws IngestbenchError when a generator exited without a final report (the first such error)
   */
  async stop(): Promise<GeneratorFinal[]> {
    const settled = await Promise.allSettled(this.procs.map((p) => p.stop()));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<GeneratorFinal>).value);
  }
}

/** The first index in [0, n) where the monotone predicate holds (false…false true…true), or n. */
function firstIndex(n: number, holds: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
