/**
 * VictoriaLogs' storage figures from its own `/metrics` (Prometheus text, core/prometheus.ts), for the verifier's
 * Verifier.storage (./verifier.ts), in VictoriaLogs 1.52.2's names:
 * - `vl_data_size_bytes{type="storage"}`: the compressed size of the entries' parts (the same as
 *   Σ `vl_compressed_data_size_bytes{type="storage/…"}`), in-memory parts included: after `/internal/force_flush` the
 *   entries sit in in-memory parts until -inmemoryDataFlushInterval (5 s by default) writes them out, at the same
 *   size, so the figure needs no wait for the disk. This is the footprint.
 * - `vl_data_size_bytes{type="indexdb"}`: the stream index, named in the source but not counted: while its part is in
 *   memory the figure is the in-memory part's buffer, far above what the part takes once written
 *   (docs/measurements.md, "Storage footprint of OpenSearch and VictoriaLogs").
 * - `vl_uncompressed_data_size_bytes{type="storage/inmemory"|"storage/small"|"storage/big"}`: the entries before
 *   compression as VictoriaLogs counts them (field names and values; it equals `vl_bytes_ingested_total` for entries
 *   ingested once), its own compression ratio's numerator.
 * - `vl_storage_rows{type="storage/…"}`: the entries the instance holds, to tell whether the figures are a run's.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { parsePrometheusText, requiredSum, type PromSamples } from "../../../core/prometheus.ts";
import type { StorageFootprint } from "../../../core/verifier.ts";

/** The families read here; other lines are not handed to the parser (see storageFromMetrics). */
const READ = /^vl_(data_size_bytes|uncompressed_data_size_bytes|storage_rows)[{ ]/;

const isType =
  (t: string) =>
  (labels: Record<string, string>): boolean =>
    labels.type === t;
const isEntries = (labels: Record<string, string>): boolean => labels.type?.startsWith("storage/") ?? false;

/**
 * The footprint of the instance whose `/metrics` text is `text`, when it holds exactly `ours` entries (the run's).
 * @returns bytes = vl_data_size_bytes{type="storage"}, uncompressedBytes = Σ vl_uncompressed_data_size_bytes
 * @throws IngestbenchError E_VL_STORAGE when the instance holds other entries than the run's (its figures are not
 *   the run's), or when the text lacks one of the metrics (PrometheusTextError's message)
 */
export function storageFromMetrics(text: string, ours: number): StorageFootprint {
  let m: PromSamples;
  let data: number, index: number, uncompressed: number, held: number;
  try {
    // only the families read: VictoriaLogs writes ", " between the labels of some others (vm_app_version,
    // vm_log_messages_total), which parse-prometheus-text-format refuses as an invalid line
    m = parsePrometheusText(
      text
        .split("\n")
        .filter((l) => READ.test(l))
        .join("\n"),
    );
    data = requiredSum(m, "vl_data_size_bytes", isType("storage"));
    index = requiredSum(m, "vl_data_size_bytes", isType("indexdb"));
    uncompressed = requiredSum(m, "vl_uncompressed_data_size_bytes", isEntries);
    held = requiredSum(m, "vl_storage_rows", isEntries);
  } catch (err) {
    throw new IngestbenchError("E_VL_STORAGE", `VictoriaLogs /metrics: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (held !== ours)
    throw new IngestbenchError(
      "E_VL_STORAGE",
      `VictoriaLogs holds ${held} entries (vl_storage_rows) and ${ours} of them are this run's: its storage metrics are the instance's, not the run's`,
    );
  return {
    bytes: data,
    uncompressedBytes: uncompressed,
    source: `VictoriaLogs /metrics after /internal/force_flush, the whole instance (this run's own: all ${held} entries it holds, vl_storage_rows, are the run's): vl_data_size_bytes{type="storage"} ${data} (the stream index, {type="indexdb"} ${index}, not counted), vl_uncompressed_data_size_bytes{type=~"storage/.*"} ${uncompressed}`,
  };
}
