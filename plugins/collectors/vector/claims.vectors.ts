/**
 * Byte-level vector of Vector's metrics payload (Vector cannot run here): metric names and the tags
 * component_id/component_kind/component_type/intentional as the Vector reference ("Internal metrics") gives them,
 * with our own values. Read by ./claims.test.ts and test/harness/remote/claims.test.ts.
 */
/** Vector 0.49 internal_metrics through prometheus_exporter (/metrics): the telemetry pipeline reports too. */
export const VECTOR = `# HELP vector_component_received_events_total component_received_events_total
# TYPE vector_component_received_events_total counter
vector_component_received_events_total{component_id="ib_in",component_kind="source",component_name="ib_in",component_type="http_server",host="collector-1",protocol="http"} 8000 1732924800123
vector_component_received_events_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1"} 8000 1732924800123
vector_component_received_events_total{component_id="ib_internal_metrics",component_kind="source",component_name="ib_internal_metrics",component_type="internal_metrics",host="collector-1"} 99999 1732924800123
vector_component_received_events_total{component_id="ib_metrics",component_kind="sink",component_name="ib_metrics",component_type="prometheus_exporter",host="collector-1"} 99999 1732924800123
# HELP vector_component_sent_events_total component_sent_events_total
# TYPE vector_component_sent_events_total counter
vector_component_sent_events_total{component_id="ib_in",component_kind="source",component_name="ib_in",component_type="http_server",host="collector-1",output="_default"} 8000 1732924800123
vector_component_sent_events_total{component_id="ib_internal_metrics",component_kind="source",component_name="ib_internal_metrics",component_type="internal_metrics",host="collector-1",output="_default"} 99999 1732924800123
vector_component_sent_events_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1"} 7900 1732924800123
vector_component_sent_events_total{component_id="ib_metrics",component_kind="sink",component_name="ib_metrics",component_type="prometheus_exporter",host="collector-1"} 99999 1732924800123
# HELP vector_component_discarded_events_total component_discarded_events_total
# TYPE vector_component_discarded_events_total counter
vector_component_discarded_events_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1",intentional="false"} 60 1732924800123
# HELP vector_component_errors_total component_errors_total
# TYPE vector_component_errors_total counter
vector_component_errors_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",error_type="request_failed",host="collector-1",stage="sending"} 3 1732924800123
# HELP vector_buffer_events buffer_events
# TYPE vector_buffer_events gauge
vector_buffer_events{buffer_type="memory",component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1",stage="0"} 40 1732924800123
vector_buffer_events{buffer_type="memory",component_id="ib_metrics",component_kind="sink",component_name="ib_metrics",component_type="prometheus_exporter",host="collector-1",stage="0"} 7 1732924800123
# HELP vector_http_server_handler_duration_seconds http_server_handler_duration_seconds
# TYPE vector_http_server_handler_duration_seconds histogram
vector_http_server_handler_duration_seconds_bucket{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1",le="0.005"} 70 1732924800123
vector_http_server_handler_duration_seconds_bucket{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1",le="+Inf"} 80 1732924800123
vector_http_server_handler_duration_seconds_sum{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1"} 0.31 1732924800123
vector_http_server_handler_duration_seconds_count{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1"} 80 1732924800123
`;
