/**
 * VictoriaLogs 1.52.2's /metrics, the families ./storage.ts reads and their neighbours, recorded from the real
 * server (the project's build, scripts/build-victorialogs.sh) after 3000 JSON lines at /insert/jsonline and
 * `GET /internal/force_flush` (recorded 2026-12-07, the data path renamed; where: docs/measurements.md). Read by ./storage.test.ts.
 */
export const VL_METRICS_3000 = `vl_bytes_ingested_total{type="jsonline"} 339780
vl_rows_ingested_total{type="jsonline"} 3000
vl_free_disk_space_bytes{path="/var/lib/ingestbench/sink/victorialogs"} 78447349760
vl_storage_rows{type="storage/inmemory"} 3000
vl_storage_rows{type="storage/small"} 0
vl_storage_rows{type="storage/big"} 0
vl_storage_parts{type="storage/inmemory"} 1
vl_storage_parts{type="storage/small"} 0
vl_storage_parts{type="storage/big"} 0
vl_data_size_bytes{type="indexdb"} 16384
vl_data_size_bytes{type="storage"} 19700
vl_compressed_data_size_bytes{type="storage/inmemory"} 19700
vl_compressed_data_size_bytes{type="storage/small"} 0
vl_compressed_data_size_bytes{type="storage/big"} 0
vl_uncompressed_data_size_bytes{type="storage/inmemory"} 339780
vl_uncompressed_data_size_bytes{type="storage/small"} 0
vl_uncompressed_data_size_bytes{type="storage/big"} 0
vm_app_version{version="victoria-logs-20260716-022047-tags-v1.52.2", short_version="v1.52.2"} 1
`;
