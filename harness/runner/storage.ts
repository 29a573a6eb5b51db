/**
 * The storage footprint of a run: what the sink says its table or index takes on disk after the ledger
 * (core/verifier.ts Verifier.storage), per million stored rows, and against the rows uncompressed where the sink
 * keeps that figure, and against the log lines' own bytes where the run's summary has them (`withLogBytes`).
 * Recorded as run.json `storage`.
 */
import type { Verifier } from "../../core/verifier.ts";
import type { RunStorage } from "../results/types.ts";

/**
 * @param rows the distinct rows the ledger found stored
 * @returns the footprint, or `{ unavailable }` saying why there is none (no reader, or the sink's error)
 */
export async function storageOf(
  verifier: Pick<Verifier, "storage">,
  rows: number,
): Promise<RunStorage | { unavailable: string }> {
  if (!verifier.storage) return { unavailable: "this sink's verifier reads no storage figure" };
  try {
    const s = await verifier.storage();
    return {
      ...s,
      rows,
      bytesPerMillionRows: rows > 0 ? Math.round((s.bytes / rows) * 1e6) : null,
      ...(s.uncompressedBytes && s.bytes > 0 ? { compression: s.uncompressedBytes / s.bytes } : {}),
    };
  } catch (err) {
    return { unavailable: `the sink did not say: ${(err as Error).message.split("\n")[0]}` };
  }
}

/** What `withLogBytes` reads of the run's summary (harness/results/types.ts Summary.logBytesPerRow, where present). */
export interface LogBytesOf {
  /** mean bytes of the log line itself per row (not the wire encoding); null or absent: unknown */
  logBytesPerRow?: number | null;
}

/**
 * The footprint with the log lines' bytes of its rows (rows × logBytesPerRow) and logCompression = logBytes / bytes,
 * when the summary has a log size per row and the sink a size; otherwise the footprint unchanged.
 * @param summary the run's summary, typed loosely: the field is added to Summary by another module
 */
export function withLogBytes<S extends RunStorage | { unavailable: string } | undefined>(
  storage: S,
  summary: object | null | undefined,
): S {
  const per = (summary as LogBytesOf | null | undefined)?.logBytesPerRow;
  if (!storage || !("bytes" in storage) || typeof per !== "number" || !(per > 0)) return storage;
  const logBytes = Math.round(storage.rows * per);
  return { ...storage, logBytes, ...(storage.bytes > 0 ? { logCompression: logBytes / storage.bytes } : {}) };
}
