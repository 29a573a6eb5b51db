/**
 * What each fault step cost (run.json `faults`), from the run's timeline (./steps.ts), its series and its ledger:
 *
 * - faults are the steps that ran with `fault` set (by default kill, stop, restart and network; cont ends a stop's
 *   episode, exec and script observe unless the scenario says `fault: true`: harness/scenario/steps.ts);
 * - lost: each of the ledger's missing seq ranges goes to the first fault that ended at or after the time the
 *   range's first seq was sent (seq → send time from the series' `sent`, interpolated linearly between samples;
 *   with n generators, seq s of a generator is taken as the (s·n)-th event sent overall), or to the last fault when
 *   it was sent after all of them. Rows a collector held when it was killed were sent before the kill ended, so they
 *   land on the kill; so do rows sent after a kill or stop ended but before the next step on the same host (a
 *   restart) began: the host was down. The ledger lists at most MAX_MISSING_RANGES ranges (core/ledger.ts): the counts are the sum of
 *   the listed ranges, and `lost` of the run is the ledger's exact total;
 * - duplicated: the run's ledger.duplicated when the run had one fault, else null (the verifiers count duplicates, they
 *   do not list their seqs);
 * - recovery: the pre-fault median is the median stored rows/s of the measured samples before the fault started
 *   (else of every sample before it), counting only windows wholly after the first stored row (start-up is no
 *   throughput); recovery is the end of the first sample window that lies wholly after the
 *   fault's start (and after its end) with stored rows/s ≥ RECOVERY_SHARE × that median, minus the fault's start, in
 *   seconds: at sample resolution (the scenario's interval);
 * - peak lag and backlog age: the largest over the samples from the fault's start to the start of the next fault on
 *   another host (faults on the same host, e.g. a kill and the restart after it, are one episode); the last: to the
 *   end of the series, drain included.
 */
import type { Ledger } from "../../core/verifier.ts";
import { median } from "../stats/descriptive.ts";
import type { FaultCost, SeriesPoint, TimelineEntry } from "../results/types.ts";
import { int, pct } from "../../ui/format.ts";

/** Fault actions after which their host stays down until a later step on it (restart, cont) brings it back. */
const LEAVES_DOWN: ReadonlySet<string> = new Set(["kill", "stop"]);

/** Share of the pre-fault median that counts as recovered. */
export const RECOVERY_SHARE = 0.9;

/** Epoch ms at which the `n`-th event overall was sent (n ≥ 0), interpolated on the series' `sent`; null outside it. */
export function sentTime(series: readonly SeriesPoint[], n: number): number | null {
  let prev: { t: number; sent: number } | null = null;
  for (const p of series) {
    if (p.sent > n) {
      if (!prev) return p.t;
      return prev.t + ((n - prev.sent) / (p.sent - prev.sent)) * (p.t - prev.t);
    }
    prev = p;
  }
  return prev ? prev.t : null;
}

/**
 * The cost of each fault in `timeline` (entries that ran with `fault` set), in timeline order; [] when none.
 * `generators` is the number of generator processes (for the seq → send time mapping).
 */
export function faultCosts(
  timeline: readonly TimelineEntry[],
  series: readonly SeriesPoint[],
  ledger: Ledger | null,
  generators: number,
): FaultCost[] {
  const faults = timeline.filter((e) => e.fault && e.startT !== null && e.endT !== null);
  if (faults.length === 0) return [];
  const costs: FaultCost[] = faults.map((f) => ({
    step: f.index,
    name: f.name,
    lost: 0,
    lostRanges: [],
    duplicated: null,
    preMedianRowsPerSec: null,
    recoverySeconds: null,
    peakLagMs: null,
    peakBacklogLagMs: null,
  }));
  if (ledger) {
    for (const range of ledger.missingRanges) {
      const ts = sentTime(series, range[1] * Math.max(1, generators));
      let i = ts === null ? faults.length - 1 : faults.findIndex((f) => f.endT! >= ts);
      if (i < 0) i = faults.length - 1;
      // sent while a killed or stopped host was still down, before the step that brings it back began: the loss is
      // the kill's (a write to a dead peer's socket succeeds until its RST returns; a seq's send time is interpolated
      // from samples and can fall a little after the kill ended)
      const prev = faults[i - 1];
      if (
        ts !== null &&
        prev &&
        ts < faults[i]!.startT! &&
        prev.host !== null &&
        prev.host === faults[i]!.host &&
        LEAVES_DOWN.has(prev.action)
      )
        i--;
      costs[i]!.lostRanges.push(range);
      costs[i]!.lost += range[2] - range[1] + 1;
    }
    if (faults.length === 1) costs[0]!.duplicated = ledger.duplicated;
  }
  faults.forEach((f, i) => {
    const c = costs[i]!;
    const start = f.startT!;
    // windows wholly after the first stored row: the pipeline's start-up is not its pre-fault throughput
    const delivering = series.findIndex((p) => p.stored > 0);
    const before = series.filter(
      (p, k) => delivering >= 0 && k > delivering && p.t <= start && p.rowsPerSec !== null,
    );
    const measured = before.filter((p) => p.phase === "measure");
    const base = (measured.length > 0 ? measured : before).map((p) => p.rowsPerSec!);
    c.preMedianRowsPerSec = base.length > 0 ? median(base) : null;
    if (c.preMedianRowsPerSec !== null && c.preMedianRowsPerSec > 0) {
      const after = Math.max(start, f.endT!);
      for (let k = 1; k < series.length; k++) {
        const p = series[k]!;
        if (series[k - 1]!.t < after || p.rowsPerSec === null) continue;
        if (p.rowsPerSec >= RECOVERY_SHARE * c.preMedianRowsPerSec) {
          c.recoverySeconds = (p.t - start) / 1000;
          break;
        }
      }
    }
    const next = faults
      .slice(i + 1)
      .find((g) => g.startT! >= start && (g.host === null || g.host !== f.host));
    const until = next?.startT ?? Infinity;
    const span = series.filter((p) => p.t >= start && p.t < until);
    const peak = (xs: Array<number | null | undefined>): number | null => {
      const v = xs.filter((x): x is number => typeof x === "number");
      return v.length > 0 ? Math.max(...v) : null;
    };
    c.peakLagMs = peak(span.map((p) => p.lagMs));
    c.peakBacklogLagMs = peak(span.map((p) => p.backlogLagMs));
  });
  return costs;
}

/** One terminal line per fault: "fault kill collector at 3.0 s: lost 1,234 (gen 0 100..1333), duplicated 0, recovered in 2.1 s, lag peak 1,800 ms". */
export function faultLines(costs: readonly FaultCost[], timeline: readonly TimelineEntry[]): string[] {
  return costs.map((c) => {
    const e = timeline.find((x) => x.index === c.step);
    const at = e?.startS !== null && e?.startS !== undefined ? ` at ${e.startS.toFixed(1)} s` : "";
    const ranges = c.lostRanges.length
      ? ` (${c.lostRanges
          .slice(0, 3)
          .map(([g, a, b]) => `gen ${g} ${a}..${b}`)
          .join(", ")}${c.lostRanges.length > 3 ? ", …" : ""})`
      : "";
    const dup = c.duplicated === null ? "" : `, duplicated ${int(c.duplicated)}`;
    const rec =
      c.preMedianRowsPerSec === null
        ? "no pre-fault rate"
        : c.recoverySeconds === null
          ? `not back to ${RECOVERY_SHARE * 100} % of ${int(c.preMedianRowsPerSec)} rows/s during the load`
          : `back to ${pct(RECOVERY_SHARE)} of ${int(c.preMedianRowsPerSec)} rows/s after ${c.recoverySeconds.toFixed(1)} s`;
    const lag = c.peakLagMs === null ? "" : `, lag peak ${int(c.peakLagMs)} ms`;
    const backlog =
      c.peakBacklogLagMs === null || c.peakBacklogLagMs === undefined
        ? ""
        : `, backlog ≥ ${int(c.peakBacklogLagMs)} ms`;
    return `fault ${c.name}${at}: lost ${int(c.lost)}${ranges}${dup}; ${rec}${lag}${backlog}`;
  });
}

/** One terminal line per timeline entry: "step 0 kill collector (at 3s): ok 3.01–3.02 s, exit 0". */
export function timelineLines(timeline: readonly TimelineEntry[]): string[] {
  return timeline.map((e) => {
    const when =
      e.startS === null ? "not run" : `${e.startS.toFixed(2)}–${e.endS === null ? "?" : e.endS.toFixed(2)} s`;
    const out = e.output.trim()
      ? `: ${e.output.trim().split("\n").slice(0, 2).join(" | ").slice(0, 160)}`
      : "";
    return `step ${e.index} ${e.name} (${e.trigger}): ${e.status} ${when}${e.exitCode === null ? "" : `, exit ${e.exitCode}`}${out}`;
  });
}
