/**
 * The storage footprint of a run: what the sink says its table or index takes on disk after the ledger
 * (core/verifier.ts Verifier.storage), per million stored rows, and against the rows uncompressed where the sink
 * keeps that figure. Recorded as run.json `storage`.
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
