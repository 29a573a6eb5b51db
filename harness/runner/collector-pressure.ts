/**
 * What a collector's own flush and queue counters say about the run (docs/output.md, the saturation verdict; write-up
 * 000, docs/write-ups.md, found its ceiling as Fluentd's flushes growing from about 1 s to 20–29 s with no errors). Fed from the series (SeriesPoint.collector,
 * read every sample by the component's `signals`), interpreted per plugin by its `pressure` (core/plugin.ts
 * OutputPressure: Fluentd's monitor_agent in plugins/collectors/fluentd/claims.ts fluentdPressure, the OTel
 * Collector's exporter queue, Fluent Bit's output capacity), and handed to the saturation verdict
 * (./saturation.ts VerdictOptions.pressure):
 *
 * - flush time: mean ms per flush = Δflush time / Δflushes over a stretch (Fluentd: flush_time_count / write_count;
 *   flush_time_count is the sum of each flush's elapsed ms, output.rb check_slow_flush), over the last third of the
 *   measurement and the first; growing when the per-window means rise (Mann–Kendall) and at least double (as
 *   ./saturation.ts `grows`, at least 200 ms);
 * - slow flushes: the rise of the collector's own count of flushes over its threshold (slow_flush_count over
 *   slow_flush_log_threshold);
 * - queue: at its limit when the median used share of the last third of the samples is ≥ NEAR_LIMIT (Fluentd's
 *   1 − buffer_available_buffer_space_ratios / 100 of total_limit_size; otelcol's queue_size / queue_capacity);
 *   growing when what is queued rises (Mann–Kendall) by at least half its first third's median (QUEUE_GROWTH_SHARE;
 *   a queue bounded by its limit cannot double once it is near it);
 * - retries: their rise over the measurement (evidence only: a retry is the output's own recovery).
 *
 * Saturated: the queue at its limit, or slow flushes rising with the queue or the flush time growing, or both of
 * those growing. The output named is the one under the most pressure: the collector's output toward the sink, where
 * the backpressure came from.
 */
import type { OutputPressure } from "../../core/plugin.ts";
import type { PressureFigures, SeriesPoint } from "../results/types.ts";
import { findCollector } from "../../plugins/registry.ts";
import { median } from "../stats/descriptive.ts";
import { trendOf } from "../stats/trend.ts";
import { bytes as fmtBytes, int, pct, secondsOf } from "../../ui/format.ts";

/** A queue at least this share full counts as at its limit ("at or near"). */
export const NEAR_LIMIT = 0.9;
/** one-sided Mann–Kendall p at or below which a flush time or a queue grows (as ./saturation.ts GROWTH_P) */
export const PRESSURE_GROWTH_P = 0.01;
/** a queue grows when it rises by at least this share of its first third's median (a flush time: doubles) */
export const QUEUE_GROWTH_SHARE = 0.5;
/** samples with readings needed before anything is said */
export const MIN_PRESSURE_SAMPLES = 5;

/** What the collector's counters said over the measurement (see the file comment). */
export interface CollectorPressure {
  collector: string;
  /** the output under the most pressure, in the collector's words (Fluentd's @id, otelcol's exporter id) */
  output: string;
  saturated: boolean;
  /** seconds since load start from which it was saturated (saturated only) */
  beganS?: number;
  /** "flush time 2.4 s (0.4 s at the start), 12 slow flushes, queue at its limit (97 % used, 8.1 MiB), no retries" */
  evidence: string;
  /** "fluentd's output ib_sink toward clickhouse" */
  where: string;
  /** the figures, for run.json */
  figures: PressureFigures;
}

export type { PressureFigures } from "../results/types.ts";

/** One output's readings over the samples (summed over the collector hosts; the fullest host's queue share). */
interface OutputTrack {
  output: string;
  at: Array<{ elapsedS: number; r: OutputPressure }>;
}

/** Readings of several hosts for one output at one sample: cumulative fields and queued summed, queueUsed the most. */
function mergeHosts(list: OutputPressure[]): OutputPressure {
  const out: OutputPressure = { output: list[0]!.output };
  const sumKeys = ["flushTimeMs", "flushes", "slowFlushes", "queued", "retries", "sendFailures"] as const;
  for (const r of list) {
    for (const k of sumKeys) if (r[k] !== undefined) out[k] = (out[k] ?? 0) + r[k]!;
    if (r.queueUsed !== undefined) out.queueUsed = Math.max(out.queueUsed ?? 0, r.queueUsed);
    if (r.queuedUnit) out.queuedUnit = r.queuedUnit;
  }
  return out;
}

/** The series as one track per output (samples whose every host read failed are left out). */
function tracks(
  series: readonly SeriesPoint[],
  read: (signals: Readonly<Record<string, number>>) => OutputPressure[],
): OutputTrack[] {
  const byOutput = new Map<string, OutputTrack>();
  for (const p of series) {
    const perOutput = new Map<string, OutputPressure[]>();
    for (const signals of Object.values(p.collector?.hosts ?? {}))
      for (const r of read(signals)) perOutput.set(r.output, [...(perOutput.get(r.output) ?? []), r]);
    for (const [output, list] of perOutput) {
      const t = byOutput.get(output) ?? { output, at: [] };
      t.at.push({ elapsedS: p.elapsedS, r: mergeHosts(list) });
      byOutput.set(output, t);
    }
  }
  return [...byOutput.values()];
}

/** Rise of a cumulative field from the first reading that has it to the last; null when none has it. */
function rise(at: OutputTrack["at"], key: "slowFlushes" | "retries" | "sendFailures"): number | null {
  const v = at.flatMap((a) => (a.r[key] === undefined ? [] : [a.r[key]!]));
  return v.length ? Math.max(0, v[v.length - 1]! - v[0]!) : null;
}

/** Mean ms per flush between readings i and j (Δflush time / Δflushes), null without flushes in between. */
function flushMsBetween(a: OutputPressure, b: OutputPressure): number | null {
  if (a.flushTimeMs === undefined || b.flushTimeMs === undefined) return null;
  if (a.flushes === undefined || b.flushes === undefined) return null;
  const n = b.flushes - a.flushes;
  return n > 0 ? (b.flushTimeMs - a.flushTimeMs) / n : null;
}

/**
 * Does `y` over `x` grow: Mann–Kendall increasing at PRESSURE_GROWTH_P, and a Theil–Sen rise over the span of at
 * least max(`floor`, `share` × the first third's median)?
 */
function growing(x: number[], y: number[], floor: number, share: number): boolean {
  if (y.length < 3) return false;
  const t = trendOf(x, y);
  const base = median(y.slice(0, Math.max(1, Math.ceil(y.length / 3))));
  const rise = t.slope * (x[x.length - 1]! - x[0]!);
  return t.z > 0 && t.p / 2 <= PRESSURE_GROWTH_P && rise >= Math.max(floor, share * base);
}

/** One output's judgement (see the file comment). */
function judge(t: OutputTrack): {
  saturated: boolean;
  beganS?: number;
  figures: PressureFigures;
  growth: string[];
} {
  const at = t.at;
  const n = at.length;
  const third = Math.max(2, Math.ceil(n / 3));
  const lastThird = at.slice(n - third);
  const windows = at.slice(1).flatMap((b, i) => {
    const ms = flushMsBetween(at[i]!.r, b.r);
    return ms === null ? [] : [{ x: b.elapsedS, ms }];
  });
  const flushMs = flushMsBetween(lastThird[0]!.r, lastThird[lastThird.length - 1]!.r);
  const flushMsAtStart = flushMsBetween(at[0]!.r, at[third - 1]!.r);
  const flushGrowing = growing(
    windows.map((w) => w.x),
    windows.map((w) => w.ms),
    200,
    1,
  );
  const queuedPts = at.flatMap((a) => (a.r.queued === undefined ? [] : [[a.elapsedS, a.r.queued] as const]));
  const queueGrowing = growing(
    queuedPts.map((p) => p[0]),
    queuedPts.map((p) => p[1]),
    1,
    QUEUE_GROWTH_SHARE,
  );
  const used = lastThird.flatMap((a) => (a.r.queueUsed === undefined ? [] : [a.r.queueUsed]));
  const queueUsed = used.length ? median(used) : null;
  const atLimit = queueUsed !== null && queueUsed >= NEAR_LIMIT;
  const slowFlushes = rise(at, "slowFlushes");
  const slowRising = (slowFlushes ?? 0) > 0;
  const saturated =
    atLimit || (slowRising && (queueGrowing || flushGrowing)) || (queueGrowing && flushGrowing);
  const firstFull = at.find((a) => (a.r.queueUsed ?? 0) >= NEAR_LIMIT)?.elapsedS;
  const firstSlow = at.find((a) => (a.r.slowFlushes ?? 0) > (at[0]!.r.slowFlushes ?? 0))?.elapsedS;
  // the earliest sign: the first slow flush, or the first sample at the limit, else the window's start
  const onsets = [atLimit ? firstFull : undefined, slowRising ? firstSlow : undefined].filter(
    (x): x is number => x !== undefined,
  );
  const began = onsets.length ? Math.min(...onsets) : at[0]!.elapsedS;
  const last = at[n - 1]!.r;
  return {
    saturated,
    ...(saturated && began !== undefined ? { beganS: began } : {}),
    figures: {
      flushMs,
      flushMsAtStart,
      slowFlushes,
      queueUsed,
      queued: last.queued ?? null,
      queuedUnit: last.queuedUnit ?? null,
      retries: rise(at, "retries"),
      sendFailures: rise(at, "sendFailures"),
    },
    growth: [
      ...(atLimit ? ["at its limit"] : []),
      ...(queueGrowing ? ["growing"] : []),
      ...(flushGrowing ? ["flush time growing"] : []),
    ],
  };
}

/** The evidence words of one output's figures: "flush time 2.4 s (0.4 s at the start), 12 slow flushes, …". */
function evidenceOf(f: PressureFigures, growth: readonly string[]): string {
  const parts: string[] = [];
  if (f.flushMs !== null) {
    const start =
      f.flushMsAtStart !== null && Math.abs(f.flushMsAtStart - f.flushMs) >= 100
        ? ` (${secondsOf(f.flushMsAtStart)} at the start${growth.includes("flush time growing") ? ", growing" : ""})`
        : "";
    parts.push(`flush time ${secondsOf(f.flushMs)}${start}`);
  }
  if (f.slowFlushes !== null) parts.push(`${int(f.slowFlushes)} slow flushes`);
  const queueState = growth.filter((g) => g !== "flush time growing");
  const queued =
    f.queued === null ? null : f.queuedUnit === "bytes" ? fmtBytes(f.queued) : `${int(f.queued)} queued`;
  const detail = [f.queueUsed !== null ? `${pct(f.queueUsed)} used` : null, queued]
    .filter(Boolean)
    .join(", ");
  if (f.queueUsed !== null || f.queued !== null)
    parts.push(
      `queue ${queueState.length ? queueState.join(" and ") : "not growing"}${detail ? ` (${detail})` : ""}`,
    );
  if (f.retries !== null) parts.push(f.retries ? `${int(f.retries)} retries` : "no retries");
  if (f.sendFailures) parts.push(`${int(f.sendFailures)} failed sends`);
  return parts.join(", ");
}

/**
 * The collector's flush and queue pressure over `series` (the measurement samples, in time order), read by `read`
 * (a collector plugin's `pressure`); `collector` and `sink` name them in the words. Undefined when fewer than
 * MIN_PRESSURE_SAMPLES samples carry readings of an output.
 */
export function collectorPressure(
  series: readonly SeriesPoint[],
  read: (signals: Readonly<Record<string, number>>) => OutputPressure[],
  names: { collector: string; sink?: string },
): CollectorPressure | undefined {
  const judged = tracks(series, read)
    .filter((t) => t.at.length >= MIN_PRESSURE_SAMPLES)
    .map((t) => ({ t, j: judge(t) }));
  if (!judged.length) return undefined;
  // the output under the most pressure: saturated first, then the fuller queue, the more slow flushes, longer flushes
  const score = (x: (typeof judged)[number]): number[] => [
    x.j.saturated ? 1 : 0,
    x.j.figures.queueUsed ?? 0,
    x.j.figures.slowFlushes ?? 0,
    x.j.figures.flushMs ?? 0,
  ];
  judged.sort((a, b) => {
    const sa = score(a);
    const sb = score(b);
    const i = sa.findIndex((v, k) => v !== sb[k]);
    return i < 0 ? 0 : sb[i]! - sa[i]!;
  });
  const { t, j } = judged[0]!;
  return {
    collector: names.collector,
    output: t.output,
    saturated: j.saturated,
    ...(j.beganS !== undefined ? { beganS: j.beganS } : {}),
    evidence: evidenceOf(j.figures, j.growth),
    where: `${names.collector}'s output ${t.output}${names.sink ? ` toward ${names.sink}` : ""}`,
    figures: j.figures,
  };
}

/**
 * collectorPressure of a run's measurement samples, with the plugin the series names (SeriesPoint.collector.name)
 * and its `pressure`; undefined when the run has no collector signals or the plugin reads no pressure.
 */
export function runPressure(measure: readonly SeriesPoint[], sink?: string): CollectorPressure | undefined {
  const name = measure.find((p) => p.collector)?.collector?.name;
  const read = name === undefined ? undefined : findCollector(name)?.pressure;
  return read && name
    ? collectorPressure(measure, read, { collector: name, ...(sink ? { sink } : {}) })
    : undefined;
}
