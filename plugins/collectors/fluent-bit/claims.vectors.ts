/**
 * Byte-level vector of Fluent Bit's metrics payload (Fluent Bit cannot run here): metric names and labels as the
 * Fluent Bit docs ("Monitoring", v2 metrics table) give them, with our own values. Read by ./claims.test.ts and
 * test/harness/remote/claims.test.ts.
 */
/** Fluent Bit 4.x /api/v2/metrics/prometheus (cmetrics' Prometheus text: HELP/TYPE lines, `name` = plugin instance). */
export const FLUENT_BIT = `# HELP fluentbit_uptime Number of seconds that Fluent Bit has been running.
# TYPE fluentbit_uptime counter
fluentbit_uptime{hostname="collector-1"} 61
# HELP fluentbit_input_bytes_total Number of input bytes.
# TYPE fluentbit_input_bytes_total counter
fluentbit_input_bytes_total{name="http.0"} 4915200
# HELP fluentbit_input_records_total Number of input records.
# TYPE fluentbit_input_records_total counter
fluentbit_input_records_total{name="http.0"} 12000
fluentbit_input_records_total{name="forward.1"} 345
# HELP fluentbit_output_proc_records_total Number of processed output records.
# TYPE fluentbit_output_proc_records_total counter
fluentbit_output_proc_records_total{name="http.0"} 11000
# HELP fluentbit_output_proc_bytes_total Number of processed output bytes.
# TYPE fluentbit_output_proc_bytes_total counter
fluentbit_output_proc_bytes_total{name="http.0"} 4505600
# HELP fluentbit_output_errors_total Number of output errors.
# TYPE fluentbit_output_errors_total counter
fluentbit_output_errors_total{name="http.0"} 5
# HELP fluentbit_output_retries_total Number of output retries.
# TYPE fluentbit_output_retries_total counter
fluentbit_output_retries_total{name="http.0"} 4
# HELP fluentbit_output_retries_failed_total Number of abandoned batches because the maximum number of re-tries was reached.
# TYPE fluentbit_output_retries_failed_total counter
fluentbit_output_retries_failed_total{name="http.0"} 1
# HELP fluentbit_output_dropped_records_total Number of dropped records.
# TYPE fluentbit_output_dropped_records_total counter
fluentbit_output_dropped_records_total{name="http.0"} 500
# HELP fluentbit_output_retried_records_total Number of retried records.
# TYPE fluentbit_output_retried_records_total counter
fluentbit_output_retried_records_total{name="http.0"} 2000
# HELP fluentbit_input_storage_chunks Total number of chunks.
# TYPE fluentbit_input_storage_chunks gauge
fluentbit_input_storage_chunks{name="http.0"} 3
# HELP fluentbit_build_info Build version information.
# TYPE fluentbit_build_info gauge
fluentbit_build_info{hostname="collector-1",version="4.0.3",os="linux"} 1732924800
# HELP fluentbit_output_latency_seconds End-to-end latency in seconds
# TYPE fluentbit_output_latency_seconds histogram
fluentbit_output_latency_seconds_bucket{input="http.0",output="http.0",le="0.5"} 10000
fluentbit_output_latency_seconds_bucket{input="http.0",output="http.0",le="+Inf"} 11000
fluentbit_output_latency_seconds_sum{input="http.0",output="http.0"} 2345.5
fluentbit_output_latency_seconds_count{input="http.0",output="http.0"} 11000
`;
