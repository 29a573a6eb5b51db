/**
 * Vector's claims reader (./claims.ts). Vector cannot run here: the reader is tested against the BYTE-LEVEL VECTOR
 * of the payload its reference documents (./claims.vectors.ts), served by a real node:http server on 127.0.0.1 and
 * read over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { at, closeMetricsServers, serve } from "../../../test/helpers/metrics-server.ts";
import { claims, vectorPressure } from "./claims.ts";
import { VECTOR } from "./claims.vectors.ts";

afterEach(closeMetricsServers);

describe("Vector claims against its reference's payload (byte-level vectors; Vector not run here)", () => {
  it("Vector (internal_metrics reference): sources' received, sinks' sent, unintentional discards; its own telemetry pipeline left out", async () => {
    const s = await serve("/metrics", VECTOR);
    expect(await claims.read(at(s.port))).toEqual({
      received: 8000,
      written: 7900,
      dropped: 60,
      errors: 3,
      queued: 40,
    });
    // the verdict's view (harness/runner/collector-pressure.ts) of the same counts as a series sample keeps them
    expect(vectorPressure(await claims.read(at(s.port)))).toEqual([
      { output: "sinks", queued: 40, queuedUnit: "items", sendFailures: 3 },
    ]);
    expect(vectorPressure({})).toEqual([]);
  });

  it("Vector: intentional discards are `filtered`, not dropped; no discards reported means dropped 0", async () => {
    const filtered = VECTOR.replace(
      /^vector_component_discarded_events_total\{.*$/m,
      (line) =>
        `${line}\n${line.replace('intentional="false"', 'intentional="true"').replace(" 60 ", " 25 ")}`,
    );
    const a = await serve("/metrics", filtered);
    expect(await claims.read(at(a.port))).toMatchObject({ dropped: 60, filtered: 25 });
    const b = await serve("/metrics", VECTOR.replace(/^vector_component_discarded_events_total\{.*\n/m, ""));
    const counts = await claims.read(at(b.port));
    expect(counts.dropped).toBe(0);
    expect(counts).not.toHaveProperty("filtered");
  });

  it("a value that is not a float, and HTTP 500, are errors naming the collector and the URL", async () => {
    const word = await serve("/metrics", VECTOR.replace(" 7900 ", " lots "));
    await expect(claims.read(at(word.port))).rejects.toThrow(
      `vector metrics at http://127.0.0.1:${word.port}/metrics: not Prometheus text: vector_component_sent_events_total has the value "lots"`,
    );
    const failing = await serve("/metrics", "internal error", { status: 500 });
    await expect(claims.read(at(failing.port))).rejects.toThrow(
      `vector metrics at http://127.0.0.1:${failing.port}/metrics: HTTP 500: internal error`,
    );
  });
});
