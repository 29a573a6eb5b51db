// The run's storage footprint (harness/runner/storage.ts) from a verifier's StorageFootprint, and its compression
// against the log lines' bytes where the summary carries Summary.logBytesPerRow (a fixture summary here; the field is
// the log-bytes module's). The sinks' own figures are read for real in test/e2e (ledger, clickhouse, opensearch,
// victorialogs).
import { describe, expect, it } from "vitest";
import { storageOf, withLogBytes } from "../../../harness/runner/storage.ts";

/** A summary as run.json carries it once the log-bytes module fills logBytesPerRow (the fields read here and two more). */
const SUMMARY_WITH_LOG_BYTES = { rowsPerSecond: 8000, mibPerSecond: 2.4, logBytesPerRow: 212.5 };

describe("storage footprint", () => {
  it("per million rows and the sink's own compression where it keeps uncompressed bytes", async () => {
    const s = await storageOf(
      { storage: async () => ({ bytes: 19_700, uncompressedBytes: 339_780, source: "vl" }) },
      3000,
    );
    expect(s).toEqual({
      bytes: 19_700,
      uncompressedBytes: 339_780,
      compression: 339_780 / 19_700,
      rows: 3000,
      bytesPerMillionRows: Math.round((19_700 / 3000) * 1e6),
      source: "vl",
    });
    expect(await storageOf({}, 3000)).toEqual({
      unavailable: "this sink's verifier reads no storage figure",
    });
    expect(
      await storageOf(
        {
          storage: async () => {
            throw new Error("holds 5 entries\nmore");
          },
        },
        3,
      ),
    ).toEqual({ unavailable: "the sink did not say: holds 5 entries" });
  });

  it("against log bytes: rows × logBytesPerRow over the bytes on disk, only where the summary has logBytesPerRow", async () => {
    const s = await storageOf({ storage: async () => ({ bytes: 55_644, source: "os" }) }, 1000);
    const w = withLogBytes(s, SUMMARY_WITH_LOG_BYTES);
    expect(w).toMatchObject({ bytes: 55_644, rows: 1000, logBytes: 212_500 });
    expect((w as { logCompression: number }).logCompression).toBeCloseTo(212_500 / 55_644, 12);
    expect(w).not.toHaveProperty("compression"); // the sink keeps no uncompressed figure
    // no field (a summary before the log-bytes module), null (unknown), no rows on disk, no footprint
    expect(withLogBytes(s, { rowsPerSecond: 8000 })).toBe(s);
    expect(withLogBytes(s, { logBytesPerRow: null })).toBe(s);
    expect(withLogBytes(s, null)).toBe(s);
    const empty = { ...(s as object), bytes: 0 } as typeof s;
    expect(withLogBytes(empty, SUMMARY_WITH_LOG_BYTES)).toEqual({ ...empty, logBytes: 212_500 });
    const none = { unavailable: "x" };
    expect(withLogBytes(none, SUMMARY_WITH_LOG_BYTES)).toBe(none);
    expect(withLogBytes(undefined, SUMMARY_WITH_LOG_BYTES)).toBeUndefined();
  });
});
