/**
 * Prometheus text exposition (format 0.0.4, Prometheus docs "Exposition formats"), parsed into samples by metric
 * name, and sums over them: what the collectors' claims readers (plugins/collectors/<name>/claims.ts) read from the
 * metrics endpoints of Fluent Bit and Vector. Parsing is parse-prometheus-text-format's (prom2json's shape); this
 * module adds the checks that tell an HTML page or a truncated body from the format.
 */
import { createRequire } from "node:module";

/** One family as parse-prometheus-text-format returns it (prom2json's shape): values stay strings. */
interface PromFamily {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}
// the package is CommonJS without type declarations: its one export, typed by its README
const parsePrometheusTextFormat = createRequire(import.meta.url)("parse-prometheus-text-format") as (
  text: string,
) => PromFamily[];

/** A sample: labels and its value. */
export interface PromSample {
  labels: Record<string, string>;
  value: number;
}

/** Samples by metric name (counters, gauges and untyped families only). */
export type PromSamples = Map<string, PromSample[]>;

/** A payload that is not Prometheus text, or a sum that is not a count; the message says why (callers prefix where it came from). */
export class PrometheusTextError extends Error {}

// Prometheus "Exposition formats", text format: metric names match [a-zA-Z_:][a-zA-Z0-9_:]*; values are Go floats
// (including NaN, +Inf, -Inf)
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const FLOAT = /^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|Inf|NaN)$/i;

/**
 * Parse Prometheus text exposition (format 0.0.4) into samples by metric name, counters, gauges and untyped only.
 * @throws PrometheusTextError "not Prometheus text: ..." when the body is not that format (e.g. an HTML page): a
 *         family name that is not a metric name, or a sample value that is not a float
 */
export function parsePrometheusText(text: string): PromSamples {
  let families: PromFamily[];
  try {
    families = parsePrometheusTextFormat(text);
  } catch (e) {
    throw new PrometheusTextError(`not Prometheus text: ${(e as Error).message}`, { cause: e });
  }
  const out: PromSamples = new Map();
  for (const f of families) {
    if (!METRIC_NAME.test(f.name))
      throw new PrometheusTextError(`not Prometheus text: "${f.name.slice(0, 60)}" is not a metric name`);
    if (!["COUNTER", "GAUGE", "UNTYPED"].includes(f.type)) continue;
    out.set(
      f.name,
      f.metrics.map((m) => {
        const raw = m.value ?? "";
        if (!FLOAT.test(raw))
          throw new PrometheusTextError(`not Prometheus text: ${f.name} has the value "${raw.slice(0, 40)}"`);
        return { labels: m.labels ?? {}, value: Number(raw.replace(/inf/i, "Infinity")) };
      }),
    );
  }
  return out;
}

/**
 * Sum of `metric`'s samples that pass `keep`; undefined when the payload has no such family.
 * @throws PrometheusTextError when a kept sample is not a finite number (a count cannot be NaN or Inf)
 */
export function sumOf(
  samples: PromSamples,
  metric: string,
  keep: (labels: Record<string, string>) => boolean = () => true,
): number | undefined {
  const list = samples.get(metric);
  if (!list) return undefined;
  let sum = 0;
  for (const s of list) {
    if (!keep(s.labels)) continue;
    if (!Number.isFinite(s.value)) throw new PrometheusTextError(`${metric} is ${s.value}, not a count`);
    sum += s.value;
  }
  return sum;
}

/** Like sumOf, for a family the exporter always has. @throws PrometheusTextError when it is absent */
export function requiredSum(
  samples: PromSamples,
  metric: string,
  keep?: (labels: Record<string, string>) => boolean,
): number {
  const v = sumOf(samples, metric, keep);
  if (v === undefined)
    throw new PrometheusTextError(`no ${metric} in the payload (${samples.size} metric families)`);
  return v;
}
