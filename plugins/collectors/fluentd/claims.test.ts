/**
 * Fluentd's claims reader (./claims.ts). Fluentd cannot run here: the reader is tested against BYTE-LEVEL VECTORS of
 * the monitor_agent payload its docs publish (./claims.vectors.ts), served by a real node:http server on 127.0.0.1
 * and read over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { at, closedPort, closeMetricsServers, serve } from "../../../test/helpers/metrics-server.ts";
import { claims } from "./claims.ts";
import { fluentdPlugins } from "./claims.vectors.ts";

afterEach(closeMetricsServers);

describe("Fluentd claims against its docs' payload (byte-level vectors; Fluentd not run here)", () => {
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
