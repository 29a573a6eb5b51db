/**
 * Fluentd's claims and signals readers (./claims.ts). Fluentd is not installed in CI: the readers are tested against
 * vectors (./claims.vectors.ts) — the monitor_agent payload its docs publish, and bodies RECORDED from a real Fluentd
 * 1.12.0 run on this project's machine — served by a real node:http server on 127.0.0.1 and read over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { at, closedPort, closeMetricsServers, serve } from "../../../test/helpers/metrics-server.ts";
import { claims, monitorAgentSignals, parseMonitorAgentSignals } from "./claims.ts";
import { fluentdPlugins, RECORDED_1_12_0_WORKER_0, RECORDED_1_12_0_WORKER_1 } from "./claims.vectors.ts";

afterEach(closeMetricsServers);

describe("Fluentd claims against its docs' payload (byte-level vectors)", () => {
  it("Fluentd 1.12 (monitor_agent docs): output emit_records as `emitted`, retries and buffer gauges; no `received` from 1.12 inputs", async () => {
    const s = await serve(
      "/api/plugins.json",
      fluentdPlugins({ emit: 7000, retries: 2, queued: 3, bytes: 65536, writes: 68 }),
      { type: "application/json" },
    );
    expect(await claims.read(at(s.port))).toEqual({
      emitted: 7000,
      retries: 2,
      queuedChunks: 3,
      queuedBytes: 65536,
      writes: 68,
      rollbacks: 1,
    });
  });

  it("Fluentd ≥ 1.13 with input metrics: inputs' emit_records are `received`, monitor_agent's own left out", async () => {
    const s = await serve(
      "/api/plugins.json",
      fluentdPlugins({ emit: 900, retries: 0, queued: 0, bytes: 2048, writes: 9, inputRecords: 1000 }),
    );
    expect(await claims.read(at(s.port))).toMatchObject({ received: 1000, emitted: 900 });
  });

  it("Fluentd with several workers reads monitor_agent at port + worker id (Fluentd v1 in_monitor_agent configure)", () => {
    expect(claims.ports!(24220, { system: { workers: 3 } })).toEqual([24220, 24221, 24222]);
    expect(claims.ports!(24220, {})).toEqual([24220]);
  });

  it("a body that is not the documented format, and a refused connection, are errors naming the collector and the URL", async () => {
    const notJson = await serve("/api/plugins.json", '{"plugins":[');
    await expect(claims.read(at(notJson.port))).rejects.toThrow(
      `fluentd metrics at http://127.0.0.1:${notJson.port}/api/plugins.json: not JSON`,
    );
    const shape = await serve(
      "/api/plugins.json",
      JSON.stringify({ plugins: [{ plugin_category: "output", emit_records: "many" }] }),
    );
    await expect(claims.read(at(shape.port))).rejects.toThrow(
      /fluentd metrics at .*: not monitor_agent's plugin list: plugins\.0\.emit_records/,
    );
    const noOutput = await serve(
      "/api/plugins.json",
      JSON.stringify({ plugins: [{ plugin_category: "input", type: "forward", retry_count: null }] }),
    );
    await expect(claims.read(at(noOutput.port))).rejects.toThrow(
      /no output plugin reports emit_records \(1 plugins listed\)/,
    );
    const refused = await closedPort();
    await expect(claims.read(at(refused))).rejects.toThrow(
      new RegExp(`^fluentd metrics at http://127\\.0\\.0\\.1:${refused}/api/plugins\\.json: .*ECONNREFUSED`),
    );
  });
});

describe("Fluentd claims and signals against vectors recorded from real Fluentd 1.12.0", () => {
  it("claims: the sink's output only (the @FLUENT_LOG null output left out), per worker; signals keyed by @id", async () => {
    const w0 = await serve("/api/plugins.json", RECORDED_1_12_0_WORKER_0, { type: "application/json" });
    const w1 = await serve("/api/plugins.json", RECORDED_1_12_0_WORKER_1, { type: "application/json" });
    // before the fix the null output's 3 log events were summed into `emitted` (32003)
    expect(await claims.read(at(w0.port))).toEqual({
      emitted: 32000,
      retries: 0,
      queuedChunks: 0,
      queuedBytes: 170944,
      writes: 32,
      rollbacks: 0,
    });
    expect(await claims.read(at(w1.port))).toMatchObject({ emitted: 23000, queuedChunks: 1, writes: 22 });
    expect(parseMonitorAgentSignals(RECORDED_1_12_0_WORKER_1)).toEqual({
      "ib_sink.buffer_queue_length": 1,
      "ib_sink.buffer_total_queued_size": 170965,
      "ib_sink.retry_count": 0,
      "ib_sink.emit_records": 23000,
      "ib_sink.write_count": 22,
      "ib_sink.rollback_count": 0,
      "ib_sink.slow_flush_count": 0,
      "ib_sink.flush_time_count": 6016,
      "ib_sink.buffer_available_buffer_space_ratios": 100,
      "ib_fluent_log.retry_count": 0,
      "ib_fluent_log.emit_records": 3,
      "ib_fluent_log.write_count": 0,
      "ib_fluent_log.rollback_count": 0,
      "ib_fluent_log.slow_flush_count": 0,
      "ib_fluent_log.flush_time_count": 0,
    });
    const both = await Promise.all([w0, w1].map((s) => monitorAgentSignals(`http://127.0.0.1:${s.port}`)));
    expect(both.map((s) => s["ib_sink.emit_records"])).toEqual([32000, 23000]);
  });
});
