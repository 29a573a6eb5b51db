/** Fluent Bit's own counts on deployed stacks, from its built-in HTTP server (core/claims.ts has the keys). */
import { prometheusClaims, withPresent, type HttpClaims } from "../../../core/claims.ts";
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
