/** Fluent Bit's own counts on deployed stacks, from its built-in HTTP server (core/claims.ts has the keys). */
import type { OutputPressure } from "../../../core/plugin.ts";
import {
  claimsError,
  fetchClaimsText,
  prometheusClaims,
  withPresent,
  type HttpClaims,
} from "../../../core/claims.ts";
import { parsePrometheusText } from "../../../core/prometheus.ts";
import { image } from "./image.ts";

/**
 * Fluent Bit (4.0.3): Prometheus text from the built-in HTTP server, GET /api/v2/metrics/prometheus. Metric names and
 * their `name` label (the plugin instance, e.g. "http.0") from the Fluent Bit docs, "Monitoring", v2 metrics table;
 * summed over every input or output instance:
 * received = fluentbit_input_records_total, written = fluentbit_output_proc_records_total (successfully sent),
 * dropped = fluentbit_output_dropped_records_total (unrecoverable error or retries expired), retries =
 * fluentbit_output_retries_total (chunks); when reported, retriedRecords = fluentbit_output_retried_records_total and
 * retriesFailed = fluentbit_output_retries_failed_total (chunks).
 */
export const claims: HttpClaims = prometheusClaims(image, ({ need, some }) =>
  withPresent(
    {
      received: need("fluentbit_input_records_total"),
      written: need("fluentbit_output_proc_records_total"),
      dropped: need("fluentbit_output_dropped_records_total"),
      retries: need("fluentbit_output_retries_total"),
    },
    {
      retriedRecords: some("fluentbit_output_retried_records_total"),
      retriesFailed: some("fluentbit_output_retries_failed_total"),
    },
  ),
);

/**
 * The series' signals from Fluent Bit's /api/v1/metrics JSON (`{"input": {"http.0": {"records": n, ...}}, "output":
 * {"http.0": {"proc_records": n, "retries": n, ...}}}`): every numeric value, keyed `<input|output|filter>.<instance>.<key>`
 * (e.g. `output.http.0.proc_records`).
 * @throws Error when the body is not that shape
 */
export function parseV1Metrics(text: string): Record<string, number> {
  const json = JSON.parse(text) as unknown;
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw new Error("not /api/v1/metrics' object of plugin kinds");
  const out: Record<string, number> = {};
  for (const [kind, instances] of Object.entries(json as Record<string, unknown>)) {
    if (instances === null || typeof instances !== "object") continue;
    for (const [name, values] of Object.entries(instances as Record<string, unknown>)) {
      if (values === null || typeof values !== "object") continue;
      for (const [key, v] of Object.entries(values as Record<string, unknown>))
        if (typeof v === "number" && Number.isFinite(v)) out[`${kind}.${name}.${key}`] = v;
    }
  }
  return out;
}

/** The v2 gauges of buffering read into the series (Fluent Bit 4.2.8 serves them at /api/v2/metrics/prometheus). */
export const V2_GAUGES = [
  "fluentbit_storage_chunks",
  "fluentbit_storage_mem_chunks",
  "fluentbit_input_storage_chunks_busy",
  "fluentbit_input_storage_chunks_busy_bytes",
  "fluentbit_input_ingestion_paused",
  "fluentbit_output_upstream_busy_connections",
  "fluentbit_output_chunk_available_capacity_percent",
] as const;

/**
 * The V2_GAUGES of a /api/v2/metrics/prometheus payload, keyed `<family>` or `<family>.<name label>` (e.g.
 * `fluentbit_input_storage_chunks_busy.http.0`); families the version lacks are left out.
 * @throws PrometheusTextError when the body is not Prometheus text
 */
export function parseV2Gauges(text: string): Record<string, number> {
  const samples = parsePrometheusText(text);
  const out: Record<string, number> = {};
  for (const family of V2_GAUGES) {
    for (const { labels, value } of samples.get(family) ?? []) {
      if (!Number.isFinite(value)) continue;
      out[labels.name !== undefined ? `${family}.${labels.name}` : family] = value;
    }
  }
  return out;
}

/**
 * The series' signals: parseV1Metrics of `<base>/api/v1/metrics` and, where served, parseV2Gauges of
 * `<base>/api/v2/metrics/prometheus` (e.g. base `http://10.213.0.2:2020`).
 * @throws IngestbenchError E_CLAIMS when /api/v1/metrics does not answer with its JSON
 */
export async function fluentBitSignals(base: string, signal?: AbortSignal): Promise<Record<string, number>> {
  const url = `${base}/api/v1/metrics`;
  const text = await fetchClaimsText(image.name, url, signal);
  let v1: Record<string, number>;
  try {
    v1 = parseV1Metrics(text);
  } catch (e) {
    throw claimsError(image.name, url, (e as Error).message, e);
  }
  let v2: Record<string, number> = {};
  try {
    v2 = parseV2Gauges(await fetchClaimsText(image.name, `${base}${image.metrics!.path}`, signal));
  } catch {
    // an older Fluent Bit without the v2 endpoint: the v1 counters alone
  }
  return { ...v1, ...v2 };
}

/**
 * The outputs' readings (core/plugin.ts OutputPressure) from one host's series signals (fluentBitSignals' keys):
 * 1 − fluentbit_output_chunk_available_capacity_percent / 100 of the output's storage.total_limit_size, retries
 * (`output.<name>.retries`) and failed flushes (`output.<name>.errors`). Fluent Bit reports no flush time.
 */
export function fluentBitPressure(signals: Readonly<Record<string, number>>): OutputPressure[] {
  const names = new Set(
    Object.keys(signals).flatMap((k) => {
      const m = /^output\.(.+)\.proc_records$/.exec(k);
      return m ? [m[1]!] : [];
    }),
  );
  return [...names].map((name) => {
    const free = signals[`fluentbit_output_chunk_available_capacity_percent.${name}`];
    const retries = signals[`output.${name}.retries`];
    const errors = signals[`output.${name}.errors`];
    return {
      output: name,
      ...(free !== undefined ? { queueUsed: Math.min(1, Math.max(0, 1 - free / 100)) } : {}),
      ...(retries !== undefined ? { retries } : {}),
      ...(errors !== undefined ? { sendFailures: errors } : {}),
    };
  });
}
