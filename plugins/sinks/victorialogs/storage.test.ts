import { describe, expect, it } from "vitest";
import { storageFromMetrics } from "./storage.ts";
import { VL_METRICS_3000 } from "./storage.vectors.ts";

describe("VictoriaLogs storage from its /metrics (vector recorded from the real 1.52.2 server; the real run is test/e2e/victorialogs.test.ts)", () => {
  it("bytes are vl_data_size_bytes{type=storage}, uncompressed the Σ of vl_uncompressed_data_size_bytes, when the instance holds the run's 3000 entries only", () => {
    const s = storageFromMetrics(VL_METRICS_3000, 3000);
    expect(s.bytes).toBe(19700);
    expect(s.uncompressedBytes).toBe(339780);
    expect(s.source).toMatch(
      /vl_data_size_bytes\{type="storage"\} 19700 \(the stream index, \{type="indexdb"\} 16384, not counted\)/,
    );
    expect(s.source).toMatch(/all 3000 entries it holds/);
  });

  it("an instance holding other entries than the run's is refused (its figures are the instance's), E_VL_STORAGE", () => {
    expect(() => storageFromMetrics(VL_METRICS_3000, 2000)).toThrow(
      expect.objectContaining({
        code: "E_VL_STORAGE",
        message: expect.stringMatching(
          /holds 3000 entries \(vl_storage_rows\) and 2000 of them are this run's/,
        ),
      }),
    );
  });

  it("a /metrics without the storage families, or not Prometheus text, is E_VL_STORAGE naming what is missing", () => {
    const without = VL_METRICS_3000.split("\n")
      .filter((l) => !l.startsWith("vl_uncompressed_data_size_bytes"))
      .join("\n");
    expect(() => storageFromMetrics(without, 3000)).toThrow(
      /no vl_uncompressed_data_size_bytes in the payload/,
    );
    expect(() => storageFromMetrics("<html>busy</html>", 3000)).toThrow(
      expect.objectContaining({
        code: "E_VL_STORAGE",
        message: expect.stringMatching(/^VictoriaLogs \/metrics: /),
      }),
    );
  });
});
