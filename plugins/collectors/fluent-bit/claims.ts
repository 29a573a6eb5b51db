/** Fluent Bit's own counts on deployed stacks, from its built-in HTTP server (core/claims.ts has the keys). */
import {
  claimsError,
  fetchClaimsText,
  prometheusClaims,
  withPresent,
  type HttpClaims,
} from "../../../core/claims.ts";
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

/** parseV1Metrics of `<base>/api/v1/metrics` (e.g. base `http://10.213.0.2:2020`). */
export async function fluentBitSignals(base: string, signal?: AbortSignal): Promise<Record<string, number>> {
  const url = `${base}/api/v1/metrics`;
  const text = await fetchClaimsText(image.name, url, signal);
  try {
    return parseV1Metrics(text);
  } catch (e) {
    throw claimsError(image.name, url, (e as Error).message, e);
  }
}
