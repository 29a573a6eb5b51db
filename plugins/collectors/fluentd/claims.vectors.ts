/**
 * Byte-level vectors of Fluentd's monitor_agent payload (Fluentd cannot run here): field names as the Fluentd docs
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
