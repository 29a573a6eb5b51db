/**
 * Fluent Bit's claims reader (./claims.ts). Fluent Bit cannot run here: the reader is tested against the BYTE-LEVEL
 * VECTOR of the payload its docs publish (./claims.vectors.ts), served by a real node:http server on 127.0.0.1 and
 * read over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { at, closeMetricsServers, serve } from "../../../test/helpers/metrics-server.ts";
import { claims } from "./claims.ts";
import { FLUENT_BIT } from "./claims.vectors.ts";

afterEach(closeMetricsServers);

describe("Fluent Bit claims against its docs' payload (byte-level vectors; Fluent Bit not run here)", () => {
  it("Fluent Bit (Monitoring docs, v2 metric names): sums over inputs and outputs, skips gauges and histograms", async () => {
    const s = await serve("/api/v2/metrics/prometheus", FLUENT_BIT);
    expect(await claims.read(at(s.port))).toEqual({
      received: 12345,
      written: 11000,
      dropped: 500,
      retries: 4,
      retriedRecords: 2000,
      retriesFailed: 1,
    });
    expect(s.paths).toEqual(["/api/v2/metrics/prometheus"]);
    expect(claims.ports).toBeUndefined();
  });

  it("a body that is not the documented format is an error naming the collector and the URL", async () => {
    const html = await serve("/api/v2/metrics/prometheus", "<html><body>Fluent Bit</body></html>\n");
    await expect(claims.read(at(html.port))).rejects.toThrow(
      `fluent-bit metrics at http://127.0.0.1:${html.port}/api/v2/metrics/prometheus: not Prometheus text`,
    );
    const partial = await serve(
      "/api/v2/metrics/prometheus",
      FLUENT_BIT.replace(/^fluentbit_output_proc_records_total\{.*\n/m, "").replace(
        /# (HELP|TYPE) fluentbit_output_proc_records_total.*\n/g,
        "",
      ),
    );
    await expect(claims.read(at(partial.port))).rejects.toThrow(
      /fluent-bit metrics at .*: no fluentbit_output_proc_records_total in the payload/,
    );
  });

  it("no answer within 5 s is an error naming the collector and the URL", async () => {
    const hung = await serve("/api/v2/metrics/prometheus", "", { hang: true });
    const t0 = Date.now();
    await expect(claims.read(at(hung.port))).rejects.toThrow(
      `fluent-bit metrics at http://127.0.0.1:${hung.port}/api/v2/metrics/prometheus: no answer within 5 s`,
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4_900);
  }, 20_000);
});
