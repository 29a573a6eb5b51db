/**
 * Fluent Bit's claims and signals readers (./claims.ts). Fluent Bit is not installed in CI: the readers are tested
 * against vectors (./claims.vectors.ts) — the payload its docs publish, and bodies RECORDED from a real Fluent Bit
 * 4.2.8 run on this project's machine — served by a real node:http server on 127.0.0.1 and read over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { at, closeMetricsServers, serve } from "../../../test/helpers/metrics-server.ts";
import { claims, fluentBitPressure, fluentBitSignals, parseV1Metrics, parseV2Gauges } from "./claims.ts";
import {
  FLUENT_BIT,
  RECORDED_4_2_8_PROMETHEUS_EARLY,
  RECORDED_4_2_8_PROMETHEUS_LATE,
  RECORDED_4_2_8_V1_EARLY,
  RECORDED_4_2_8_V1_LATE,
} from "./claims.vectors.ts";

afterEach(closeMetricsServers);

describe("Fluent Bit claims against its docs' payload (byte-level vectors)", () => {
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

describe("Fluent Bit claims and signals against vectors recorded from real Fluent Bit 4.2.8", () => {
  it("claims from /api/v2/metrics/prometheus: received, written, dropped, retries (early and late in a cell)", async () => {
    const early = await serve("/api/v2/metrics/prometheus", RECORDED_4_2_8_PROMETHEUS_EARLY);
    expect(await claims.read(at(early.port))).toEqual({
      received: 2500,
      written: 0,
      dropped: 0,
      retries: 0,
      retriedRecords: 0,
      retriesFailed: 0,
    });
    const late = await serve("/api/v2/metrics/prometheus", RECORDED_4_2_8_PROMETHEUS_LATE);
    expect(await claims.read(at(late.port))).toMatchObject({ received: 10000, written: 10000, dropped: 0 });
  });

  it("signals: /api/v1/metrics' counters per instance and the v2 buffering gauges", async () => {
    expect(parseV1Metrics(RECORDED_4_2_8_V1_LATE)).toEqual({
      "input.http.0.records": 10000,
      "input.http.0.bytes": 2769616,
      "output.http.0.proc_records": 10000,
      "output.http.0.proc_bytes": 2769616,
      "output.http.0.errors": 0,
      "output.http.0.retries": 0,
      "output.http.0.retries_failed": 0,
      "output.http.0.dropped_records": 0,
      "output.http.0.retried_records": 0,
    });
    expect(parseV2Gauges(RECORDED_4_2_8_PROMETHEUS_EARLY)).toEqual({
      fluentbit_storage_chunks: 1,
      fluentbit_storage_mem_chunks: 1,
      "fluentbit_input_storage_chunks_busy.http.0": 0,
      "fluentbit_input_storage_chunks_busy_bytes.http.0": 0,
      "fluentbit_input_ingestion_paused.http.0": 0,
      "fluentbit_output_upstream_busy_connections.http.0": 0,
      "fluentbit_output_chunk_available_capacity_percent.http.0": 100,
    });
    // the verdict's view (harness/runner/collector-pressure.ts): the output's chunk capacity all free, no retries
    const signals = {
      ...parseV1Metrics(RECORDED_4_2_8_V1_LATE),
      ...parseV2Gauges(RECORDED_4_2_8_PROMETHEUS_EARLY),
    };
    expect(fluentBitPressure(signals)).toEqual([
      { output: "http.0", queueUsed: 0, retries: 0, sendFailures: 0 },
    ]);
    // over HTTP: a server with only /api/v1/metrics (an older Fluent Bit) gives the v1 counters alone
    const v1 = await serve("/api/v1/metrics", RECORDED_4_2_8_V1_EARLY, { type: "application/json" });
    expect(await fluentBitSignals(`http://127.0.0.1:${v1.port}`)).toMatchObject({
      "input.http.0.records": 2500,
      "output.http.0.proc_records": 0,
    });
  });
});
