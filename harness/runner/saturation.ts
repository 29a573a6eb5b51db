/**
 * The saturation verdict of a run, from its series (pure; harness/runner/run.ts calls it on the measurement samples).
 * Write-up 000 (docs/write-ups.md) found its ceiling not as errors but as quiet backpressure: every request
 * succeeded while flushes took 20–29 s instead of about one, and throughput swung between 120k and 190k rows/s. So the
 * verdict reads the latencies and the throughput, not only the errors:
 *
 * 1. `rejecting`: errors or rejections rose during the measurement (the generators' sent − acknowledged, plus the
 *    collector's own drop counters where it reports them: syslog-ng `dropped`, rsyslog `discarded`/`failed`).
 * 2. `saturated (backpressure)`: from some sample on, to the end of the measurement (at least MIN_WINDOW samples and
 *    MIN_WINDOW_S seconds), every latency series there is grows — delivery latency p50 per window and the ingest lag
 *    (SeriesPoint.lagMs, or the backlog age where it is larger) — while stored rows/s stay flat, with no error. Grows:
 *    the Mann–Kendall test says increasing (one-sided p ≤ GROWTH_P) and the Theil–Sen slope times the window's length
 *    is at least max(GROWTH_MIN_MS, the window's first-third median): the latency at least doubled
 *    (harness/stats/trend.ts). Flat: the Theil–Sen slope of rows/s × the window's length falls by no more than
 *    FLAT_SHARE of its median. A rising rate counts as flat here: latency that keeps growing while the sink stores
 *    faster still means more arrives than it takes (measured: syslog-ng → ClickHouse 18.16 on a quarter-core sink,
 *    rows/s 8.6k → 18k while delivery p50 went 1 s → 8 s, syslog-ng's queue filling to log-fifo-size). A rate that
 *    falls while every latency grows is a sink taking less than it is offered, without errors: backpressure too
 *    (measured: the same pipeline on local-quarter-core on a busy machine, rows/s 4.1k → 0.7k while delivery p50
 *    went 0 → 9.6 s and the lag 0.9 → 10.4 s; the evidence says "falling"), never `steady`.
 *    It began where that window's latency splits best into a flat part and a rising line (least squares), with the
 *    slopes as evidence.
 * 3. `oscillating (min–max)`: rows/s swing with a period: the autocorrelation of the rows/s series at some lag of 2
 *    or more samples (at most a third of the series, so at least three periods are seen) is ≥ OSCILLATION_R and
 *    beyond what a series without period shows by chance, and (max − min) is at least OSCILLATION_SWING of the
 *    median. By chance: a sample autocorrelation of n uncorrelated values is about normal with mean −1/n and
 *    variance 1/n (Bartlett's approximation, Box & Jenkins, Time Series Analysis, ch. 6.1); with m lags tried the
 *    bound is −1/n + z(1 − OSCILLATION_ALPHA/m)/√n (Bonferroni). On short series that bound is what decides:
 *    six one-second samples of a batched pipeline that keeps up (syslog-ng batch-lines 1000 at 2,000 rows/s: one or
 *    two inserts land in a second) showed r = 0.51 at lag 2, where the bound is 0.78.
 * 2b. `saturated (collector backpressure)`: the collector's own counters say its output toward the sink cannot keep
 *    up (./collector-pressure.ts: its queue at its limit, or flushes slow and growing), with no error; from where
 *    they say it began. Checked before (2c), whose evidence is weaker (the generator's rate alone).
 * 2c. `saturated (behind its offered rate)`: an open loop fell behind (VerdictOptions.behind).
 * 4. `steady` otherwise; `undetermined` with fewer than MIN_WINDOW measurement samples. Every verdict past
 *    `rejecting` cites the collector's counters where it reports them (flush time, slow flushes, queue, retries).
 *
 * The trend tests cost O(n² log n) time and O(n²) memory per window (Theil–Sen's pairwise slopes): over a one-hour
 * soak's 3,600 samples the search took minutes of the harness's CPU and ~0.7 GB. So the saturation search (2) reads
 * at most TREND_POINTS points: a longer series is cut into that many runs of consecutive samples, each one point
 * (mean time, mean rows/s, median latencies, the last cumulative error count), so `beganS` is known to a run's length
 * (15 s over an hour). The oscillation test (3) reads every sample (its cost is n × lags).
 */
import type { SaturationState, SaturationVerdict, SeriesPoint } from "../results/types.ts";
import type { CollectorPressure } from "./collector-pressure.ts";
import { leastSquares, median } from "../stats/descriptive.ts";
import { normalQuantile } from "../stats/distributions.ts";
import { trendOf } from "../stats/trend.ts";
import { int as fmt, pct } from "../../ui/format.ts";

/** One sample as the verdict reads it (a projection of SeriesPoint). */
export interface VerdictPoint {
  /** seconds since load start */
  elapsedS: number;
  /** stored rows/s in the window ending here, null when unknown */
  rowsPerSec: number | null;
  /** delivery latency p50 of the rows that arrived in this window, ms; null: none arrived, or not measured */
  deliveryP50Ms: number | null;
  /** ingest lag (or the backlog age where larger), ms; null when unknown */
  lagMs: number | null;
  /** cumulative errors and rejections so far (generator rejections plus collector drops) */
  errors: number;
}

export type { SaturationState, SaturationVerdict };

/** Tunables of the verdict (defaults as exported below). */
export interface VerdictOptions {
  minWindow?: number;
  minWindowS?: number;
  /**
   * an open-loop generator that fell behind its offered rate with its own host not starved of CPUs (the caller
   * decides: harness/runner/run.ts): the pipeline pushed back on it (TCP backpressure, a full collector queue), which is
   * saturation whether or not the latency keeps growing, since the lag stops growing once the sender is held back
   */
  behind?: BehindOffered;
  /**
   * what the collector's own flush and queue counters said (./collector-pressure.ts, from the series): a queue at
   * its limit or flushes growing slow is saturation whether or not the latency keeps growing, and names the output
   * the backpressure came from
   */
  pressure?: CollectorPressure;
}

/** What an open loop offered and sent over the measurement, events/s (all generators), and what bound the run. */
export interface BehindOffered {
  offeredPerSec: number;
  sentPerSec: number;
  /** the bottleneck verdict's label, e.g. "cpu (sink)" (harness/runner/bottleneck.ts bottleneckLabel) */
  boundBy: string;
}

/** An open loop that sent less than this share of its offered rate fell behind (as harness/runner/bottleneck.ts). */
export const FELL_BEHIND = 0.9;

export const MIN_WINDOW = 5;
export const MIN_WINDOW_S = 3;
export const GROWTH_P = 0.01;
export const GROWTH_MIN_MS = 200;
export const FLAT_SHARE = 0.25;
export const OSCILLATION_R = 0.5;
export const OSCILLATION_SWING = 0.3;
/** family-wise chance of calling a series without period `oscillating` (see the file comment) */
export const OSCILLATION_ALPHA = 0.01;
/** window starts the saturation search tries at most */
export const WINDOW_STARTS = 40;
/** points the saturation search reads at most (see the file comment) */
export const TREND_POINTS = 240;

/** Does `y` over `x` grow (see the file comment)? Returns the growth over the window in ms, or null. */
function grows(x: number[], y: number[]): { slope: number; growth: number } | null {
  if (y.length < 3) return null;
  const t = trendOf(x, y);
  const span = x[x.length - 1]! - x[0]!;
  const growth = t.slope * span;
  const base = median(y.slice(0, Math.max(1, Math.ceil(y.length / 3))));
  if (!(t.z > 0 && t.p / 2 <= GROWTH_P && growth >= Math.max(GROWTH_MIN_MS, base))) return null;
  return { slope: t.slope, growth };
}

/** Pearson autocorrelation of `y` at `lag`. */
function autocorrelation(y: readonly number[], lag: number): number {
  const m = y.reduce((a, b) => a + b, 0) / y.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < y.length; i++) {
    den += (y[i]! - m) ** 2;
    if (i + lag < y.length) num += (y[i]! - m) * (y[i + lag]! - m);
  }
  return den === 0 ? 0 : num / den;
}

/**
 * The autocorrelation a rows/s series of `n` samples must reach at one of `lags` lags tried to count as periodic:
 * max(OSCILLATION_R, −1/n + z(1 − OSCILLATION_ALPHA/lags)/√n) (see the file comment). E.g. 0.78 for n = 6, one lag;
 * 0.52 for n = 30, nine lags.
 */
export function oscillationBound(n: number, lags: number): number {
  return Math.max(
    OSCILLATION_R,
    -1 / n + normalQuantile(1 - OSCILLATION_ALPHA / Math.max(1, lags)) / Math.sqrt(n),
  );
}

/** Is a window [i, end) of the points saturated? Evidence when it is. */
function saturatedFrom(points: readonly VerdictPoint[]): string | null {
  const x = points.map((p) => p.elapsedS);
  const series: Array<[string, Array<number | null>]> = [
    ["delivery p50", points.map((p) => p.deliveryP50Ms)],
    ["lag", points.map((p) => p.lagMs)],
  ];
  const evidence: string[] = [];
  for (const [name, ys] of series) {
    const pts = ys.flatMap((y, i) => (y === null ? [] : [[x[i]!, y] as const]));
    if (pts.length < Math.ceil(points.length / 2)) continue; // not measured in this window
    const g = grows(
      pts.map((p) => p[0]),
      pts.map((p) => p[1]),
    );
    if (!g) return null;
    evidence.push(`${name} +${fmt(g.slope)} ms/s (+${fmt(g.growth)} ms)`);
  }
  if (evidence.length === 0) return null;
  const rates = points.flatMap((p) => (p.rowsPerSec === null ? [] : [[p.elapsedS, p.rowsPerSec] as const]));
  if (rates.length < 3) return null;
  const r = trendOf(
    rates.map((p) => p[0]),
    rates.map((p) => p[1]),
  );
  const med = median(rates.map((p) => p[1]));
  const change = r.slope * (rates[rates.length - 1]![0] - rates[0]![0]);
  if (!(med > 0)) return null;
  const how =
    Math.abs(change) <= FLAT_SHARE * med ? "flat" : change > 0 ? "rising but not keeping up" : "falling";
  evidence.push(
    `stored ${fmt(med)} rows/s, ${how} (${change >= 0 ? "+" : ""}${fmt(change)} over the window)`,
  );
  return evidence.join(", ");
}

/** Sum of squared residuals of a least-squares line through (x, y). */
function lineSse(x: readonly number[], y: readonly number[]): number {
  if (x.length < 2) return 0;
  const { slope: b, meanX: mx, meanY: my } = leastSquares(x, y);
  return y.reduce((a, v, i) => a + (v - (my + b * (x[i]! - mx))) ** 2, 0);
}

/**
 * When a saturated window's latency began to climb: the split of the window into a flat part (its mean) and a
 * rising line (least squares) with the smallest squared error, on the latency the window shows (delivery p50 where
 * measured, else the lag); the first sample of the rising part.
 */
function knee(points: readonly VerdictPoint[]): number {
  const key =
    points.filter((p) => p.deliveryP50Ms !== null).length >= points.length / 2 ? "deliveryP50Ms" : "lagMs";
  const pts = points.flatMap((p) => (p[key] === null ? [] : [[p.elapsedS, p[key]!] as const]));
  let best = { k: 0, sse: Infinity };
  for (let k = 0; k + 2 <= pts.length; k++) {
    const flat = pts.slice(0, k).map((p) => p[1]);
    const m = flat.length ? flat.reduce((a, b) => a + b, 0) / flat.length : 0;
    const sse =
      flat.reduce((a, v) => a + (v - m) ** 2, 0) +
      lineSse(
        pts.slice(k).map((p) => p[0]),
        pts.slice(k).map((p) => p[1]),
      );
    if (sse < best.sse) best = { k, sse };
  }
  return pts[best.k]?.[0] ?? points[0]!.elapsedS;
}

/** The mean of the non-null values, null when there are none. */
const meanOf = (v: readonly (number | null)[]): number | null => {
  const xs = v.filter((x): x is number => x !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
};

/** The median of the non-null values, null when there are none. */
const medianOf = (v: readonly (number | null)[]): number | null => {
  const xs = v.filter((x): x is number => x !== null);
  return xs.length ? median(xs) : null;
};

/**
 * `points` cut into `k` runs of consecutive samples (sizes differing by at most one), each one point: mean time and
 * rows/s, median delivery p50 and lag, the run's last cumulative error count (see the file comment). Returns the
 * points themselves when there are no more than `k`.
 */
export function binnedPoints(points: readonly VerdictPoint[], k: number): readonly VerdictPoint[] {
  if (points.length <= k) return points;
  const out: VerdictPoint[] = [];
  for (let b = 0; b < k; b++) {
    const run = points.slice(Math.floor((b * points.length) / k), Math.floor(((b + 1) * points.length) / k));
    out.push({
      elapsedS: meanOf(run.map((p) => p.elapsedS))!,
      rowsPerSec: meanOf(run.map((p) => p.rowsPerSec)),
      deliveryP50Ms: medianOf(run.map((p) => p.deliveryP50Ms)),
      lagMs: medianOf(run.map((p) => p.lagMs)),
      errors: run.at(-1)!.errors,
    });
  }
  return out;
}

/** The verdict over the measurement samples, in time order (see the file comment). */
export function saturationVerdict(
  points: readonly VerdictPoint[],
  options: VerdictOptions = {},
): SaturationVerdict {
  const minWindow = options.minWindow ?? MIN_WINDOW;
  const minWindowS = options.minWindowS ?? MIN_WINDOW_S;
  const n = points.length;
  if (n < minWindow)
    return {
      state: "undetermined",
      label: `undetermined (${n} samples)`,
      evidence: `at least ${minWindow} measurement samples are needed`,
      samples: n,
    };
  const errors = points[n - 1]!.errors - points[0]!.errors;
  if (errors > 0)
    return {
      state: "rejecting",
      label: "rejecting",
      evidence: `${fmt(errors)} errors or rejections during the measurement`,
      samples: n,
    };
  const trend = binnedPoints(points, TREND_POINTS);
  const end = trend[trend.length - 1]!.elapsedS;
  // window starts tried: every sample for short series, WINDOW_STARTS evenly spaced ones for long (each try is O(n²))
  const step = Math.max(1, Math.floor(trend.length / WINDOW_STARTS));
  for (let i = 0; i + minWindow <= trend.length; i += step) {
    if (end - trend[i]!.elapsedS < minWindowS) break;
    const e = saturatedFrom(trend.slice(i));
    if (e) {
      const beganS = knee(trend.slice(i));
      return {
        state: "saturated",
        label: "saturated (backpressure)",
        beganS,
        evidence: `from ${beganS.toFixed(1)} s: ${e}, no errors${pressureWords(options.pressure)}`,
        samples: n,
        ...pressureRecord(options.pressure),
      };
    }
  }
  const b = options.behind;
  const fellBehind = b && b.offeredPerSec > 0 && b.sentPerSec < FELL_BEHIND * b.offeredPerSec;
  const pr = options.pressure;
  if (pr?.saturated) {
    const sent = fellBehind
      ? `, the generators sent ${fmt(b.sentPerSec)} of the ${fmt(b.offeredPerSec)} events/s offered`
      : "";
    return {
      state: "saturated",
      label: "saturated (collector backpressure)",
      ...(pr.beganS !== undefined ? { beganS: pr.beganS } : {}),
      evidence: `${pr.evidence}${sent}, no errors: backpressure from ${pr.where}`,
      samples: n,
      ...pressureRecord(pr),
    };
  }
  if (fellBehind) {
    const behindShare = 1 - b.sentPerSec / b.offeredPerSec;
    return {
      state: "saturated",
      label: "saturated (behind its offered rate)",
      evidence: `the generators sent ${fmt(b.sentPerSec)} of the ${fmt(b.offeredPerSec)} events/s offered (${pct(behindShare)} behind), no errors: the pipeline pushed back on them; bound by ${b.boundBy}${pressureWords(pr)}`,
      samples: n,
      ...pressureRecord(pr),
    };
  }
  const oscillating = oscillationVerdict(points, pr);
  if (oscillating) return oscillating;
  return {
    state: "steady",
    label: "steady",
    evidence: `no sustained latency growth, no periodic swing, no errors over ${n} samples${pressureWords(pr)}`,
    samples: n,
    ...pressureRecord(pr),
  };
}

/**
 * "oscillating" when the samples' rows/s swing by OSCILLATION_SWING of their median or more with a period (an
 * autocorrelation peak above oscillationBound), else null; `pr`: the collector's pressure, said beside it.
 */
function oscillationVerdict(
  points: readonly VerdictPoint[],
  pr: VerdictOptions["pressure"],
): SaturationVerdict | null {
  const n = points.length;
  const rates = points.flatMap((p) => (p.rowsPerSec === null ? [] : [p.rowsPerSec]));
  const med = median(rates);
  const lo = Math.min(...rates);
  const hi = Math.max(...rates);
  if (rates.length >= 6 && med > 0 && hi - lo >= OSCILLATION_SWING * med) {
    let best = { lag: 0, r: 0 };
    const maxLag = Math.floor(rates.length / 3);
    for (let lag = 2; lag <= maxLag; lag++) {
      const r = autocorrelation(rates, lag);
      if (r > best.r) best = { lag, r };
    }
    if (best.r >= oscillationBound(rates.length, maxLag - 1)) {
      const period = ((points[n - 1]!.elapsedS - points[0]!.elapsedS) / (n - 1)) * best.lag;
      return {
        state: "oscillating",
        label: `oscillating (${fmt(lo)}–${fmt(hi)} rows/s)`,
        evidence: `rows/s swing ${fmt(lo)}–${fmt(hi)} (median ${fmt(med)}) with a period of about ${period.toFixed(1)} s (autocorrelation ${best.r.toFixed(2)} at ${best.lag} samples)${pressureWords(pr)}`,
        samples: n,
        ...pressureRecord(pr),
      };
    }
  }
  return null;
}

/**
 * The collector's words appended to another verdict's evidence: "; backpressure from fluentd's output ib_sink toward
 * clickhouse: flush time 2.4 s, …" when its counters say saturated, else "; fluentd's output ib_sink: flush time 0.5 s, …".
 */
function pressureWords(p: CollectorPressure | undefined): string {
  if (!p) return "";
  return p.saturated
    ? `; backpressure from ${p.where}: ${p.evidence}`
    : `; ${p.collector}'s output ${p.output}: ${p.evidence}`;
}

/** SaturationVerdict.collector from the pressure, {} without one. */
function pressureRecord(p: CollectorPressure | undefined): Pick<SaturationVerdict, "collector"> {
  return p
    ? { collector: { name: p.collector, output: p.output, saturated: p.saturated, ...p.figures } }
    : {};
}

/** Collector signals that count errors: drops (syslog-ng `<dest>.dropped`), discards and failures (rsyslog). */
const ERROR_SIGNAL = /\.(dropped|discarded\.full|discarded\.nf|failed)$/;

/**
 * The verdict's view of series points: rows/s, delivery p50, the larger of lag and backlog age, and errors = the
 * generators' rejections plus the collectors' error counters (summed over hosts; ERROR_SIGNAL).
 */
export function verdictPoints(series: readonly SeriesPoint[]): VerdictPoint[] {
  return series.map((p) => {
    const lags = [p.lagMs, p.backlogLagMs ?? null].filter((v): v is number => v !== null);
    let collectorErrors = 0;
    for (const host of Object.values(p.collector?.hosts ?? {}))
      for (const [k, v] of Object.entries(host)) if (ERROR_SIGNAL.test(k)) collectorErrors += v;
    return {
      elapsedS: p.elapsedS,
      rowsPerSec: p.rowsPerSec,
      deliveryP50Ms: p.delivery?.p50Ms ?? null,
      lagMs: lags.length ? Math.max(...lags) : null,
      errors: (p.rejected ?? 0) + collectorErrors,
    };
  });
}
