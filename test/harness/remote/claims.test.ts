/**
 * RemoteSite.collectorClaims on deployed stacks (harness/remote/site.ts, harness/remote/claims.ts readHostClaims):
 * each collector plugin's claims (plugins/collectors/<name>/claims.ts, tested there) read at the ports the stack
 * outputs publish, per collector host, and summed. Fluent Bit, Vector and Fluentd cannot run here: the payloads are
 * the BYTE-LEVEL VECTORS of their docs (plugins/collectors/<name>/claims.vectors.ts), served by a real node:http
 * server on 127.0.0.1 and read over real HTTP. No shell into a container is used.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ComponentEndpoints, StackOutputs } from "../../../core/outputs.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { readHostClaims } from "../../../harness/remote/claims.ts";
import { RemoteSite } from "../../../harness/remote/site.ts";
import type { CellPlan } from "../../../harness/runner/cell-plan.ts";
import { plugin as fluentBit } from "../../../plugins/collectors/fluent-bit/index.ts";
import { FLUENT_BIT } from "../../../plugins/collectors/fluent-bit/claims.vectors.ts";
import { fluentdPlugins } from "../../../plugins/collectors/fluentd/claims.vectors.ts";
import { VECTOR } from "../../../plugins/collectors/vector/claims.vectors.ts";
import { closedPort, closeMetricsServers, serve } from "../../helpers/metrics-server.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
const STACK = "docker-4c4g";

afterEach(closeMetricsServers);

// --- RemoteSite.collectorClaims -----------------------------------------------------------------------------------

const limits = { requested: {}, applied: {}, enforced: true, notes: [] as string[] };

/** Collector endpoints on the stack network whose metrics ports are published at `published` (internal → external). */
function collectorEp(
  host: string,
  address: string,
  dataPort: number,
  metricsPort: number,
  published: Record<number, number>,
): ComponentEndpoints {
  return {
    host,
    data: { host: address, port: dataPort, scheme: "http" },
    metrics: { host: address, port: metricsPort, scheme: "http" },
    published: Object.entries(published).map(([internal, external]) => ({
      internal: Number(internal),
      external,
      ip: "127.0.0.1",
      protocol: "tcp",
    })),
  };
}

/** A scale-out deployment: `component` on collector-1 and collector-2 (listed out of order), ClickHouse on the sink. */
function outputs(component: string, eps: ComponentEndpoints[]): StackOutputs {
  const host = (address: string, c: string) => ({
    address,
    container: `ib-${STACK}-${address.split(".").pop()}`,
    component: c,
    image: `${c}:test`,
    limits,
  });
  return {
    platform: "docker",
    stack: STACK,
    network: { name: `ib-${STACK}`, subnet: "10.77.0.0/24" },
    hosts: {
      loadgen: host("10.77.0.10", "loadgen"),
      "collector-1": host("10.77.0.11", component),
      "collector-2": host("10.77.0.12", component),
      sink: host("10.77.0.13", "clickhouse"),
    },
    endpoints: {
      [component]: eps,
      clickhouse: [
        {
          host: "sink",
          data: { host: "10.77.0.13", port: 8123, scheme: "http" },
          metrics: null,
          published: [],
        },
      ],
    },
    versions: {
      [component]: { pinned: "1", image: `${component}:test`, digestResolved: false },
      clickhouse: { pinned: "25.8", image: "clickhouse:test", digestResolved: false },
    },
  };
}

function site(o: StackOutputs, collector: CellPlan["collector"]): RemoteSite {
  const plan = {
    scenario: "claims",
    sink: { name: "clickhouse", config: {} },
    collector,
    fields: [],
    generator: { name: "http-json", config: {} },
  } as unknown as CellPlan;
  return new RemoteSite({
    stack: loadStack(path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`)),
    plan,
    outputs: o,
    shell: (h) => {
      throw new Error(`collectorClaims must not open a shell (asked for ${h})`);
    },
  });
}

describe("RemoteSite.collectorClaims at the published metrics ports (byte-level vectors served locally)", () => {
  it("two Fluent Bit hosts: read at each one's published port, summed key-wise, hosts listed in collector order", async () => {
    const one = await serve("/api/v2/metrics/prometheus", FLUENT_BIT);
    const two = await serve(
      "/api/v2/metrics/prometheus",
      FLUENT_BIT.replace('{name="http.0"} 12000', '{name="http.0"} 1000').replace(
        'fluentbit_output_proc_records_total{name="http.0"} 11000',
        'fluentbit_output_proc_records_total{name="http.0"} 1300',
      ),
    );
    const o = outputs("fluent-bit", [
      collectorEp("collector-2", "10.77.0.12", 8888, 2020, { 8888: 49161, 2020: two.port }),
      collectorEp("collector-1", "10.77.0.11", 8888, 2020, { 8888: 49160, 2020: one.port }),
    ]);
    expect(await site(o, { name: "fluent-bit", config: {} }).collectorClaims()).toEqual({
      name: "fluent-bit",
      counts: {
        received: 12345 + 1345,
        written: 11000 + 1300,
        dropped: 1000,
        retries: 8,
        retriedRecords: 4000,
        retriesFailed: 2,
      },
      hosts: ["collector-1", "collector-2"],
    });
    expect([one.paths, two.paths]).toEqual([["/api/v2/metrics/prometheus"], ["/api/v2/metrics/prometheus"]]);
  });

  it("one host failing keeps its error; the other host's counts stay", async () => {
    const ok = await serve("/metrics", VECTOR);
    const failing = await serve("/metrics", "overloaded", { status: 500 });
    const o = outputs("vector", [
      collectorEp("collector-1", "10.77.0.11", 8080, 9598, { 8080: 49160, 9598: ok.port }),
      collectorEp("collector-2", "10.77.0.12", 8080, 9598, { 8080: 49161, 9598: failing.port }),
    ]);
    expect(await site(o, { name: "vector", config: {} }).collectorClaims()).toEqual({
      name: "vector",
      counts: { received: 8000, written: 7900, dropped: 60, errors: 3, queued: 40 },
      hosts: ["collector-1", "collector-2"],
      error: `collector-2: vector metrics at http://127.0.0.1:${failing.port}/metrics: HTTP 500: overloaded`,
    });
  });

  it("Fluentd with two workers: both monitor_agent ports summed; a worker port the stack does not publish is an error, not a partial sum", async () => {
    const w0 = await serve(
      "/api/plugins.json",
      fluentdPlugins({ emit: 7000, retries: 2, queued: 3, bytes: 65536, writes: 68 }),
    );
    const w1 = await serve(
      "/api/plugins.json",
      fluentdPlugins({ emit: 6000, retries: 0, queued: 1, bytes: 4096, writes: 60 }),
    );
    const c1 = await serve(
      "/api/plugins.json",
      fluentdPlugins({ emit: 500, retries: 0, queued: 0, bytes: 0, writes: 5 }),
    );
    const o = outputs("fluentd", [
      collectorEp("collector-1", "10.77.0.11", 24224, 24220, {
        24224: 49160,
        24220: w0.port,
        24221: w1.port,
      }),
      collectorEp("collector-2", "10.77.0.12", 24224, 24220, { 24224: 49161, 24220: c1.port }), // 24221 not published
    ]);
    const claims = await site(o, { name: "fluentd", config: { system: { workers: 2 } } }).collectorClaims();
    expect(claims).toEqual({
      name: "fluentd",
      counts: { emitted: 13000, retries: 2, queuedChunks: 4, queuedBytes: 69632, writes: 128, rollbacks: 2 },
      hosts: ["collector-1", "collector-2"],
      error: `collector-2: stack ${STACK}: collector-2's fluentd metrics port 24221 is not published in the outputs (published: 24220, 24224); its counts cannot be read from here`,
    });
    expect(c1.paths).toEqual([]); // nothing read on a host whose sum would be partial
  });

  it("one collector host: its counts as they are (no hosts list); its error alone when it fails", async () => {
    const s = await serve("/metrics", VECTOR);
    const o = outputs("vector", [
      collectorEp("collector-1", "10.77.0.11", 8080, 9598, { 8080: 49160, 9598: s.port }),
    ]);
    delete (o.hosts as Record<string, unknown>)["collector-2"];
    expect(await site(o, { name: "vector", config: {} }).collectorClaims()).toEqual({
      name: "vector",
      counts: { received: 8000, written: 7900, dropped: 60, errors: 3, queued: 40 },
    });
    const refused = await closedPort();
    o.endpoints.vector![0]!.published[1]!.external = refused;
    const failed = await site(o, { name: "vector", config: {} }).collectorClaims();
    expect(failed).toMatchObject({ name: "vector", counts: null });
    expect(failed!.error).toMatch(
      new RegExp(`^vector metrics at http://127\\.0\\.0\\.1:${refused}/metrics: .*ECONNREFUSED`),
    );
  });

  it("no collector, or one without a claims reader: undefined; a host without a metrics endpoint: its error", async () => {
    const o = outputs("fluent-bit", [
      collectorEp("collector-1", "10.77.0.11", 8888, 2020, {}),
      {
        host: "collector-2",
        data: { host: "10.77.0.12", port: 8888, scheme: "http" },
        metrics: null,
        published: [],
      },
    ]);
    expect(await site(o, null).collectorClaims()).toBeUndefined();
    // a collector the harness has no reader for (e.g. a local-only one) claims nothing here
    const other = outputs("rsyslog", o.endpoints["fluent-bit"]!);
    expect(await site(other, { name: "rsyslog", config: {} }).collectorClaims()).toBeUndefined();
    await expect(readHostClaims(o, "fluent-bit", fluentBit.claims, "collector-2", {})).rejects.toThrow(
      `stack ${STACK}: no fluent-bit metrics endpoint on collector-2 in the outputs`,
    );
    await expect(readHostClaims(o, "fluent-bit", fluentBit.claims, "collector-1", {})).rejects.toThrow(
      `stack ${STACK}: collector-1's fluent-bit metrics port 2020 is not published in the outputs (published: none)`,
    );
  });
});
