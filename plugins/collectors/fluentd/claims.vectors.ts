/**
 * Byte-level vectors of Fluentd's monitor_agent payload: field names as the Fluentd docs
 * ("monitor_agent", "Monitoring by REST API") give them, with our own values. Read by ./claims.test.ts and
 * test/harness/remote/claims.test.ts.
 */
/** Fluentd 1.12 monitor_agent /api/plugins.json: inputs report no emit_records; a buffered output (one worker). */
export function fluentdPlugins(o: {
  emit: number;
  retries: number;
  queued: number;
  bytes: number;
  writes: number;
  inputRecords?: number;
}): string {
  const input = (id: string, type: string, records?: number) => ({
    plugin_id: id,
    plugin_category: "input",
    type,
    output_plugin: false,
    retry_count: null,
    ...(records !== undefined ? { emit_records: records, emit_size: 0 } : {}),
    config: { "@type": type, "@id": id },
  });
  return JSON.stringify({
    plugins: [
      input("in_forward", "forward", o.inputRecords),
      input("in_monitor", "monitor_agent", o.inputRecords === undefined ? undefined : 77),
      {
        plugin_id: "object:3fec66aead48",
        plugin_category: "filter",
        type: "record_transformer",
        output_plugin: false,
        retry_count: null,
      },
      {
        plugin_id: "out_ch",
        plugin_category: "output",
        type: "http",
        output_plugin: true,
        buffer_queue_length: o.queued,
        buffer_timekeys: [],
        buffer_total_queued_size: o.bytes,
        retry_count: o.retries,
        emit_records: o.emit,
        emit_count: Math.ceil(o.emit / 100),
        write_count: o.writes,
        rollback_count: 1,
        slow_flush_count: 0,
        flush_time_count: 5123,
        buffer_stage_length: 1,
        buffer_stage_byte_size: 2048,
        buffer_queue_byte_size: o.bytes - 2048,
        buffer_available_buffer_space_ratios: 99.9,
        retry: {},
      },
    ],
  });
}

/**
 * RECORDED from a real Fluentd 1.12.0 (run from its source tree with Debian's Ruby 3.1.2; README.md) on 2026-12-07,
 * GET /api/plugins.json of each worker's monitor_agent (`<system> workers 2`: ports 24220 and 24221) during the run
 * of scenarios/fluentd-clickhouse-chunk-limit-records.yaml (chunk_limit_records 1000) recorded in
 * docs/measurements.md, with the config ./render.ts made: the out_http output `ib_sink`, the null output
 * `ib_fluent_log` of Fluentd's own log events, the ClickHouse filter. The bodies as served.
 */
export const RECORDED_1_12_0_WORKER_0 = `{"plugins":[{"plugin_id":"object:71c","plugin_category":"input","type":"forward","config":{"@type":"forward","bind":"0.0.0.0","port":"24224"},"output_plugin":false,"retry_count":null},{"plugin_id":"object:730","plugin_category":"input","type":"monitor_agent","config":{"@type":"monitor_agent","bind":"0.0.0.0","port":"24220"},"output_plugin":false,"retry_count":null},{"plugin_id":"ib_sink","plugin_category":"output","type":"http","config":{"@type":"http","@id":"ib_sink","endpoint":"http://10.214.100.3:8123/?query=INSERT%20INTO%20default.ib_events%20(%22host%22%2C%20%22method%22%2C%20%22path%22%2C%20%22code%22%2C%20%22size%22%2C%20%22agent%22%2C%20%22gen%22%2C%20%22seq%22%2C%20%22sent_at%22)%20FORMAT%20JSONEachRow","http_method":"post","content_type":"application/x-ndjson","json_array":"false","slow_flush_log_threshold":"20"},"output_plugin":true,"buffer_queue_length":0,"buffer_timekeys":[],"buffer_total_queued_size":170944,"retry_count":0,"emit_records":32000,"emit_count":32,"write_count":32,"rollback_count":0,"slow_flush_count":0,"flush_time_count":9031,"buffer_stage_length":0,"buffer_stage_byte_size":0,"buffer_queue_byte_size":170944,"buffer_available_buffer_space_ratios":100.0,"retry":{}},{"plugin_id":"object:744","plugin_category":"filter","type":"record_transformer","config":{"@type":"record_transformer","enable_ruby":"true","auto_typecast":"true"},"output_plugin":false,"retry_count":null},{"plugin_id":"ib_fluent_log","plugin_category":"output","type":"null","config":{"@type":"null","@id":"ib_fluent_log"},"output_plugin":true,"retry_count":0,"emit_records":3,"emit_count":3,"write_count":0,"rollback_count":0,"slow_flush_count":0,"flush_time_count":0,"retry":{}}]}`;
/** The same moment's worker 1 (port 24221): one chunk queued (buffer_queue_length 1). */
export const RECORDED_1_12_0_WORKER_1 = `{"plugins":[{"plugin_id":"object:708","plugin_category":"input","type":"forward","config":{"@type":"forward","bind":"0.0.0.0","port":"24224"},"output_plugin":false,"retry_count":null},{"plugin_id":"object:71c","plugin_category":"input","type":"monitor_agent","config":{"@type":"monitor_agent","bind":"0.0.0.0","port":"24220"},"output_plugin":false,"retry_count":null},{"plugin_id":"ib_sink","plugin_category":"output","type":"http","config":{"@type":"http","@id":"ib_sink","endpoint":"http://10.214.100.3:8123/?query=INSERT%20INTO%20default.ib_events%20(%22host%22%2C%20%22method%22%2C%20%22path%22%2C%20%22code%22%2C%20%22size%22%2C%20%22agent%22%2C%20%22gen%22%2C%20%22seq%22%2C%20%22sent_at%22)%20FORMAT%20JSONEachRow","http_method":"post","content_type":"application/x-ndjson","json_array":"false","slow_flush_log_threshold":"20"},"output_plugin":true,"buffer_queue_length":1,"buffer_timekeys":[],"buffer_total_queued_size":170965,"retry_count":0,"emit_records":23000,"emit_count":23,"write_count":22,"rollback_count":0,"slow_flush_count":0,"flush_time_count":6016,"buffer_stage_length":0,"buffer_stage_byte_size":0,"buffer_queue_byte_size":170965,"buffer_available_buffer_space_ratios":100.0,"retry":{}},{"plugin_id":"object:730","plugin_category":"filter","type":"record_transformer","config":{"@type":"record_transformer","enable_ruby":"true","auto_typecast":"true"},"output_plugin":false,"retry_count":null},{"plugin_id":"ib_fluent_log","plugin_category":"output","type":"null","config":{"@type":"null","@id":"ib_fluent_log"},"output_plugin":true,"retry_count":0,"emit_records":3,"emit_count":3,"write_count":0,"rollback_count":0,"slow_flush_count":0,"flush_time_count":0,"retry":{}}]}`;
