/**
 * The collectors' own counts on deployed stacks (harness/remote/claims.ts). Fluent Bit, Vector and Fluentd cannot
 * run here: each reader is tested against BYTE-LEVEL VECTORS of the payloads their docs publish — metric names and
 * labels as the Fluent Bit docs ("Monitoring", v2 metrics table), the Vector reference ("Internal metrics", tags
 * component_id/component_kind/component_type/intentional) and the Fluentd docs ("monitor_agent", "Monitoring by REST
 * API") give them, with our own values — served by a real node:http server on 127.0.0.1 and read over real HTTP.
 * RemoteSite.collectorClaims reads them at the ports the stack outputs publish; no shell into a container is used.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ComponentEndpoints, StackOutputs } from "../../../core/outputs.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { claimsReaders, readHostClaims, shellClaimsReaders } from "../../../harness/remote/claims.ts";
import { parseStats } from "../../../infra/components/syslog-ng.ts";
import { RemoteSite } from "../../../harness/remote/site.ts";
import type { CellPlan } from "../../../harness/runner/run.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
const STACK = "docker-4c4g";

// --- payloads (byte-level vectors) --------------------------------------------------------------------------------

/** Fluent Bit 4.x /api/v2/metrics/prometheus (cmetrics' Prometheus text: HELP/TYPE lines, `name` = plugin instance). */
const FLUENT_BIT = `# HELP fluentbit_uptime Number of seconds that Fluent Bit has been running.
# TYPE fluentbit_uptime counter
fluentbit_uptime{hostname="collector-1"} 61
# HELP fluentbit_input_bytes_total Number of input bytes.
# TYPE fluentbit_input_bytes_total counter
fluentbit_input_bytes_total{name="http.0"} 4915200
# HELP fluentbit_input_records_total Number of input records.
# TYPE fluentbit_input_records_total counter
fluentbit_input_records_total{name="http.0"} 12000
fluentbit_input_records_total{name="forward.1"} 345
# HELP fluentbit_output_proc_records_total Number of processed output records.
# TYPE fluentbit_output_proc_records_total counter
fluentbit_output_proc_records_total{name="http.0"} 11000
# HELP fluentbit_output_proc_bytes_total Number of processed output bytes.
# TYPE fluentbit_output_proc_bytes_total counter
fluentbit_output_proc_bytes_total{name="http.0"} 4505600
# HELP fluentbit_output_errors_total Number of output errors.
# TYPE fluentbit_output_errors_total counter
fluentbit_output_errors_total{name="http.0"} 5
# HELP fluentbit_output_retries_total Number of output retries.
# TYPE fluentbit_output_retries_total counter
fluentbit_output_retries_total{name="http.0"} 4
# HELP fluentbit_output_retries_failed_total Number of abandoned batches because the maximum number of re-tries was reached.
# TYPE fluentbit_output_retries_failed_total counter
fluentbit_output_retries_failed_total{name="http.0"} 1
# HELP fluentbit_output_dropped_records_total Number of dropped records.
# TYPE fluentbit_output_dropped_records_total counter
fluentbit_output_dropped_records_total{name="http.0"} 500
# HELP fluentbit_output_retried_records_total Number of retried records.
# TYPE fluentbit_output_retried_records_total counter
fluentbit_output_retried_records_total{name="http.0"} 2000
# HELP fluentbit_input_storage_chunks Total number of chunks.
# TYPE fluentbit_input_storage_chunks gauge
fluentbit_input_storage_chunks{name="http.0"} 3
# HELP fluentbit_build_info Build version information.
# TYPE fluentbit_build_info gauge
fluentbit_build_info{hostname="collector-1",version="4.0.3",os="linux"} 1732924800
# HELP fluentbit_output_latency_seconds End-to-end latency in seconds
# TYPE fluentbit_output_latency_seconds histogram
fluentbit_output_latency_seconds_bucket{input="http.0",output="http.0",le="0.5"} 10000
fluentbit_output_latency_seconds_bucket{input="http.0",output="http.0",le="+Inf"} 11000
fluentbit_output_latency_seconds_sum{input="http.0",output="http.0"} 2345.5
fluentbit_output_latency_seconds_count{input="http.0",output="http.0"} 11000
`;

/** Vector 0.49 internal_metrics through prometheus_exporter (/metrics): the telemetry pipeline reports too. */
const VECTOR = `# HELP vector_component_received_events_total component_received_events_total
# TYPE vector_component_received_events_total counter
vector_component_received_events_total{component_id="ib_in",component_kind="source",component_name="ib_in",component_type="http_server",host="collector-1",protocol="http"} 8000 1732924800123
vector_component_received_events_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1"} 8000 1732924800123
vector_component_received_events_total{component_id="ib_internal_metrics",component_kind="source",component_name="ib_internal_metrics",component_type="internal_metrics",host="collector-1"} 99999 1732924800123
vector_component_received_events_total{component_id="ib_metrics",component_kind="sink",component_name="ib_metrics",component_type="prometheus_exporter",host="collector-1"} 99999 1732924800123
# HELP vector_component_sent_events_total component_sent_events_total
# TYPE vector_component_sent_events_total counter
vector_component_sent_events_total{component_id="ib_in",component_kind="source",component_name="ib_in",component_type="http_server",host="collector-1",output="_default"} 8000 1732924800123
vector_component_sent_events_total{component_id="ib_internal_metrics",component_kind="source",component_name="ib_internal_metrics",component_type="internal_metrics",host="collector-1",output="_default"} 99999 1732924800123
vector_component_sent_events_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1"} 7900 1732924800123
vector_component_sent_events_total{component_id="ib_metrics",component_kind="sink",component_name="ib_metrics",component_type="prometheus_exporter",host="collector-1"} 99999 1732924800123
# HELP vector_component_discarded_events_total component_discarded_events_total
# TYPE vector_component_discarded_events_total counter
vector_component_discarded_events_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1",intentional="false"} 60 1732924800123
# HELP vector_component_errors_total component_errors_total
# TYPE vector_component_errors_total counter
vector_component_errors_total{component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",error_type="request_failed",host="collector-1",stage="sending"} 3 1732924800123
# HELP vector_buffer_events buffer_events
# TYPE vector_buffer_events gauge
vector_buffer_events{buffer_type="memory",component_id="ib_out",component_kind="sink",component_name="ib_out",component_type="clickhouse",host="collector-1",stage="0"} 40 1732924800123
vector_buffer_events{buffer_type="memory",component_id="ib_metrics",component_kind="sink",component_name="ib_metrics",component_type="prometheus_exporter",host="collector-1",stage="0"} 7 1732924800123
# HELP vector_http_server_handler_duration_seconds http_server_handler_duration_seconds
# TYPE vector_http_server_handler_duration_seconds histogram
vector_http_server_handler_duration_seconds_bucket{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1",le="0.005"} 70 1732924800123
vector_http_server_handler_duration_seconds_bucket{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1",le="+Inf"} 80 1732924800123
vector_http_server_handler_duration_seconds_sum{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1"} 0.31 1732924800123
vector_http_server_handler_duration_seconds_count{component_id="ib_in",component_kind="source",component_type="http_server",host="collector-1"} 80 1732924800123
`;

/** Fluentd 1.12 monitor_agent /api/plugins.json: inputs report no emit_records; a buffered output (one worker). */
function fluentdPlugins(o: { emit: number; retries: number; queued: number; bytes: number; writes: number; inputRecords?: number }): string {
  const input = (id: string, type: string, records?: number) => ({
    plugin_id: id, plugin_category: "input", type, output_plugin: false, retry_count: null,
    ...(records !== undefined ? { emit_records: records, emit_size: 0 } : {}), config: { "@type": type, "@id": id },
  });
  return JSON.stringify({
    plugins: [
      input("in_forward", "forward", o.inputRecords),
      input("in_monitor", "monitor_agent", o.inputRecords === undefined ? undefined : 77),
      { plugin_id: "object:3fec66aead48", plugin_category: "filter", type: "record_transformer", output_plugin: false, retry_count: null },
      {
        plugin_id: "out_ch", plugin_category: "output", type: "http", output_plugin: true,
        buffer_queue_length: o.queued, buffer_timekeys: [], buffer_total_queued_size: o.bytes, retry_count: o.retries,
        emit_records: o.emit, emit_count: Math.ceil(o.emit / 100), write_count: o.writes, rollback_count: 1,
        slow_flush_count: 0, flush_time_count: 5123, buffer_stage_length: 1, buffer_stage_byte_size: 2048,
        buffer_queue_byte_size: o.bytes - 2048, buffer_available_buffer_space_ratios: 99.9, retry: {},
      },
    ],
  });
}

// --- local servers ------------------------------------------------------------------------------------------------

interface Served {
  port: number;
  paths: string[];
  close(): Promise<void>;
}
const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A real HTTP server on 127.0.0.1 answering `path` with `body` (and `status`); any other path: 404. */
async function serve(pathName: string, body: string, o: { status?: number; type?: string; hang?: boolean } = {}): Promise<Served> {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    if (o.hang) return; // never answers (the timeout test)
    if (req.url !== pathName) return void res.writeHead(404).end("not found");
    res.writeHead(o.status ?? 200, { "content-type": o.type ?? "text/plain; version=0.0.4" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s: Served = {
    port: (server.address() as AddressInfo).port,
    paths,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
  servers.push(s);
  return s;
}

/** A port nothing listens on: one a server had, now closed. */
async function closedPort(): Promise<number> {
  const s = await serve("/", "");
  servers.splice(servers.indexOf(s), 1);
  await s.close();
  return s.port;
}

const at = (port: number) => ({ host: "127.0.0.1", port });

// --- readers ------------------------------------------------------------------------------------------------------

describe("claims readers against their docs' payloads (byte-level vectors; Fluent Bit, Vector, Fluentd not run here)", () => {
  it("Fluent Bit (Monitoring docs, v2 metric names): sums over inputs and outputs, skips gauges and histograms", async () => {
    const s = await serve("/api/v2/metrics/prometheus", FLUENT_BIT);
    expect(await claimsReaders["fluent-bit"]!.read(at(s.port))).toEqual({
      received: 12345, written: 11000, dropped: 500, retries: 4, retriedRecords: 2000, retriesFailed: 1,
    });
    expect(s.paths).toEqual(["/api/v2/metrics/prometheus"]);
  });

  it("Vector (internal_metrics reference): sources' received, sinks' sent, unintentional discards; its own telemetry pipeline left out", async () => {
    const s = await serve("/metrics", VECTOR);
    expect(await claimsReaders.vector!.read(at(s.port))).toEqual({ received: 8000, written: 7900, dropped: 60, errors: 3, queued: 40 });
  });

  it("Vector: intentional discards are `filtered`, not dropped; no discards reported means dropped 0", async () => {
    const filtered = VECTOR.replace(
      /^vector_component_discarded_events_total\{.*$/m,
      (line) => `${line}\n${line.replace('intentional="false"', 'intentional="true"').replace(" 60 ", " 25 ")}`,
    );
    const a = await serve("/metrics", filtered);
    expect(await claimsReaders.vector!.read(at(a.port))).toMatchObject({ dropped: 60, filtered: 25 });
    const b = await serve("/metrics", VECTOR.replace(/^vector_component_discarded_events_total\{.*\n/m, ""));
    const counts = await claimsReaders.vector!.read(at(b.port));
    expect(counts.dropped).toBe(0);
    expect(counts).not.toHaveProperty("filtered");
  });

  it("Fluentd 1.12 (monitor_agent docs): output emit_records as `emitted`, retries and buffer gauges; no `received` from 1.12 inputs", async () => {
    const s = await serve("/api/plugins.json", fluentdPlugins({ emit: 7000, retries: 2, queued: 3, bytes: 65536, writes: 68 }), { type: "application/json" });
    expect(await claimsReaders.fluentd!.read(at(s.port))).toEqual({ emitted: 7000, retries: 2, queuedChunks: 3, queuedBytes: 65536, writes: 68, rollbacks: 1 });
  });

  it("Fluentd ≥ 1.13 with input metrics: inputs' emit_records are `received`, monitor_agent's own left out", async () => {
    const s = await serve("/api/plugins.json", fluentdPlugins({ emit: 900, retries: 0, queued: 0, bytes: 2048, writes: 9, inputRecords: 1000 }));
    expect(await claimsReaders.fluentd!.read(at(s.port))).toMatchObject({ received: 1000, emitted: 900 });
  });

  it("Fluentd with several workers reads monitor_agent at port + worker id (Fluentd v1 in_monitor_agent configure)", () => {
    expect(claimsReaders.fluentd!.ports!(24220, { system: { workers: 3 } })).toEqual([24220, 24221, 24222]);
    expect(claimsReaders.fluentd!.ports!(24220, {})).toEqual([24220]);
    expect(claimsReaders["fluent-bit"]!.ports).toBeUndefined();
  });

  it("a body that is not the documented format is an error naming the collector and the URL", async () => {
    const html = await serve("/api/v2/metrics/prometheus", "<html><body>Fluent Bit</body></html>\n");
    await expect(claimsReaders["fluent-bit"]!.read(at(html.port))).rejects.toThrow(
      `fluent-bit metrics at http://127.0.0.1:${html.port}/api/v2/metrics/prometheus: not Prometheus text`,
    );
    const partial = await serve("/api/v2/metrics/prometheus", FLUENT_BIT.replace(/^fluentbit_output_proc_records_total\{.*\n/m, "").replace(/# (HELP|TYPE) fluentbit_output_proc_records_total.*\n/g, ""));
    await expect(claimsReaders["fluent-bit"]!.read(at(partial.port))).rejects.toThrow(/fluent-bit metrics at .*: no fluentbit_output_proc_records_total in the payload/);
    const word = await serve("/metrics", VECTOR.replace(" 7900 ", " lots "));
    await expect(claimsReaders.vector!.read(at(word.port))).rejects.toThrow(
      `vector metrics at http://127.0.0.1:${word.port}/metrics: not Prometheus text: vector_component_sent_events_total has the value "lots"`,
    );
    const notJson = await serve("/api/plugins.json", '{"plugins":[');
    await expect(claimsReaders.fluentd!.read(at(notJson.port))).rejects.toThrow(`fluentd metrics at http://127.0.0.1:${notJson.port}/api/plugins.json: not JSON`);
    const shape = await serve("/api/plugins.json", JSON.stringify({ plugins: [{ plugin_category: "output", emit_records: "many" }] }));
    await expect(claimsReaders.fluentd!.read(at(shape.port))).rejects.toThrow(/fluentd metrics at .*: not monitor_agent's plugin list: plugins\.0\.emit_records/);
    const noOutput = await serve("/api/plugins.json", JSON.stringify({ plugins: [{ plugin_category: "input", type: "forward", retry_count: null }] }));
    await expect(claimsReaders.fluentd!.read(at(noOutput.port))).rejects.toThrow(/no output plugin reports emit_records \(1 plugins listed\)/);
  });

  it("HTTP 500, a refused connection and no answer within 5 s are errors naming the collector and the URL", async () => {
    const failing = await serve("/metrics", "internal error", { status: 500 });
    await expect(claimsReaders.vector!.read(at(failing.port))).rejects.toThrow(`vector metrics at http://127.0.0.1:${failing.port}/metrics: HTTP 500: internal error`);
    const refused = await closedPort();
    await expect(claimsReaders.fluentd!.read(at(refused))).rejects.toThrow(new RegExp(`^fluentd metrics at http://127\\.0\\.0\\.1:${refused}/api/plugins\\.json: .*ECONNREFUSED`));
    const hung = await serve("/api/v2/metrics/prometheus", "", { hang: true });
    const t0 = Date.now();
    await expect(claimsReaders["fluent-bit"]!.read(at(hung.port))).rejects.toThrow(`fluent-bit metrics at http://127.0.0.1:${hung.port}/api/v2/metrics/prometheus: no answer within 5 s`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4_900);
  }, 20_000);
});

// --- RemoteSite.collectorClaims -----------------------------------------------------------------------------------

const limits = { requested: {}, applied: {}, enforced: true, notes: [] as string[] };

/** Collector endpoints on the stack network whose metrics ports are published at `published` (internal → external). */
function collectorEp(host: string, address: string, dataPort: number, metricsPort: number, published: Record<number, number>): ComponentEndpoints {
  return {
    host,
    data: { host: address, port: dataPort, scheme: "http" },
    metrics: { host: address, port: metricsPort, scheme: "http" },
    published: Object.entries(published).map(([internal, external]) => ({ internal: Number(internal), external, ip: "127.0.0.1", protocol: "tcp" })),
  };
}

/** A scale-out deployment: `component` on collector-1 and collector-2 (listed out of order), ClickHouse on the sink. */
function outputs(component: string, eps: ComponentEndpoints[]): StackOutputs {
  const host = (address: string, c: string) => ({ address, container: `ib-${STACK}-${address.split(".").pop()}`, component: c, image: `${c}:test`, limits });
  return {
    platform: "docker", stack: STACK, network: { name: `ib-${STACK}`, subnet: "10.77.0.0/24" },
    hosts: { loadgen: host("10.77.0.10", "loadgen"), "collector-1": host("10.77.0.11", component), "collector-2": host("10.77.0.12", component), sink: host("10.77.0.13", "clickhouse") },
    endpoints: { [component]: eps, clickhouse: [{ host: "sink", data: { host: "10.77.0.13", port: 8123, scheme: "http" }, metrics: null, published: [] }] },
    versions: { [component]: { pinned: "1", image: `${component}:test`, digestResolved: false }, clickhouse: { pinned: "25.8", image: "clickhouse:test", digestResolved: false } },
  };
}

function site(o: StackOutputs, collector: CellPlan["collector"]): RemoteSite {
  const plan = { scenario: "claims", sink: { name: "clickhouse", config: {} }, collector, fields: [], generator: { name: "http-json", config: {} } } as unknown as CellPlan;
  return new RemoteSite({
    stack: loadStack(path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`)),
    plan,
    outputs: o,
    shell: (h) => { throw new Error(`collectorClaims must not open a shell (asked for ${h})`); },
  });
}

describe("RemoteSite.collectorClaims at the published metrics ports (byte-level vectors served locally)", () => {
  it("two Fluent Bit hosts: read at each one's published port, summed key-wise, hosts listed in collector order", async () => {
    const one = await serve("/api/v2/metrics/prometheus", FLUENT_BIT);
    const two = await serve("/api/v2/metrics/prometheus", FLUENT_BIT.replace('{name="http.0"} 12000', '{name="http.0"} 1000').replace('fluentbit_output_proc_records_total{name="http.0"} 11000', 'fluentbit_output_proc_records_total{name="http.0"} 1300'));
    const o = outputs("fluent-bit", [
      collectorEp("collector-2", "10.77.0.12", 8888, 2020, { 8888: 49161, 2020: two.port }),
      collectorEp("collector-1", "10.77.0.11", 8888, 2020, { 8888: 49160, 2020: one.port }),
    ]);
    expect(await site(o, { name: "fluent-bit", config: {} }).collectorClaims()).toEqual({
      name: "fluent-bit",
      counts: { received: 12345 + 1345, written: 11000 + 1300, dropped: 1000, retries: 8, retriedRecords: 4000, retriesFailed: 2 },
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
    const w0 = await serve("/api/plugins.json", fluentdPlugins({ emit: 7000, retries: 2, queued: 3, bytes: 65536, writes: 68 }));
    const w1 = await serve("/api/plugins.json", fluentdPlugins({ emit: 6000, retries: 0, queued: 1, bytes: 4096, writes: 60 }));
    const c1 = await serve("/api/plugins.json", fluentdPlugins({ emit: 500, retries: 0, queued: 0, bytes: 0, writes: 5 }));
    const o = outputs("fluentd", [
      collectorEp("collector-1", "10.77.0.11", 24224, 24220, { 24224: 49160, 24220: w0.port, 24221: w1.port }),
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
    const o = outputs("vector", [collectorEp("collector-1", "10.77.0.11", 8080, 9598, { 8080: 49160, 9598: s.port })]);
    delete (o.hosts as Record<string, unknown>)["collector-2"];
    expect(await site(o, { name: "vector", config: {} }).collectorClaims()).toEqual({ name: "vector", counts: { received: 8000, written: 7900, dropped: 60, errors: 3, queued: 40 } });
    const refused = await closedPort();
    o.endpoints.vector![0]!.published[1]!.external = refused;
    const failed = await site(o, { name: "vector", config: {} }).collectorClaims();
    expect(failed).toMatchObject({ name: "vector", counts: null });
    expect(failed!.error).toMatch(new RegExp(`^vector metrics at http://127\\.0\\.0\\.1:${refused}/metrics: .*ECONNREFUSED`));
  });

  it("no collector, or one without a claims reader: undefined; a host without a metrics endpoint: its error", async () => {
    const o = outputs("fluent-bit", [
      collectorEp("collector-1", "10.77.0.11", 8888, 2020, {}),
      { host: "collector-2", data: { host: "10.77.0.12", port: 8888, scheme: "http" }, metrics: null, published: [] },
    ]);
    expect(await site(o, null).collectorClaims()).toBeUndefined();
    // a collector the harness has no reader for (e.g. a local-only one) claims nothing here
    const other = outputs("rsyslog", o.endpoints["fluent-bit"]!);
    expect(await site(other, { name: "rsyslog", config: {} }).collectorClaims()).toBeUndefined();
    await expect(readHostClaims(o, claimsReaders["fluent-bit"]!, "collector-2", {})).rejects.toThrow(`stack ${STACK}: no fluent-bit metrics endpoint on collector-2 in the outputs`);
    await expect(readHostClaims(o, claimsReaders["fluent-bit"]!, "collector-1", {})).rejects.toThrow(
      `stack ${STACK}: collector-1's fluent-bit metrics port 2020 is not published in the outputs (published: none)`,
    );
  });
});

describe("syslog-ng's claims inside its container (syslog-ng-ctl stats CSV as syslog-ng 3.38 prints it)", () => {
  it("runs syslog-ng-ctl on the container's control socket and parses the counts as the local component does", async () => {
    const calls: string[][] = [];
    const csv = [
      "SourceName;SourceId;SourceInstance;State;Type;Number",
      "source;s_ib;;a;processed;5000",
      "src.network;s_ib#0;tcp,0.0.0.0:5514;a;processed;5000",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;written;4900",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;dropped;0",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;queued;100",
      "",
    ].join("\n");
    const counts = await shellClaimsReaders["syslog-ng"]!.read({ run: async (cmd, args) => { calls.push([cmd, ...args]); return csv; } });
    expect(calls).toEqual([["syslog-ng-ctl", "stats", "-c", "/var/lib/syslog-ng/syslog-ng.ctl"]]);
    expect(counts).toEqual(parseStats(csv));
    expect(counts).toEqual({ received: 5000, written: 4900, dropped: 0, queued: 100 });
  });
});
