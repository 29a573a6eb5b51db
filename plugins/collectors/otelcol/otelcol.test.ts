/**
 * The otelcol collector plugin (./index.ts), its renderer and claims as text. The container platforms' contrib
 * distribution does not run here (its elasticsearch, opensearch exporters and transform processor are not in the
 * project's build, ./component.test.ts runs that build): rendered configs are compared with the golden files in
 * ./golden/ and parsed back as YAML; the claims reader reads a byte-level vector of the Collector's Prometheus exposition served by a
 * node:http server on 127.0.0.1. UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ConfigurationError } from "../../../core/errors.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { SinkEndpoint } from "../../../core/render.ts";
import { plugin as otelcol } from "./index.ts";
import { clickhouseInsert, OTELCOL_CONFIG_FILE } from "./render.ts";
import { withEnv } from "../../../test/helpers/env.ts";
const PW = {
  INGESTBENCH_CLICKHOUSE_PASSWORD: "ch-pw-rend1",
  INGESTBENCH_ELASTICSEARCH_PASSWORD: "es-pw-rend1",
  INGESTBENCH_OPENSEARCH_PASSWORD: "os-pw-rend1",
  INGESTBENCH_LOKI_PASSWORD: "lk-pw-rend1",
  INGESTBENCH_POSTGRES_PASSWORD: "pg-pw-rend1",
};
const noSecretIn = (text: string) => {
  for (const v of Object.values(PW)) expect(text).not.toContain(v);
};

const here = path.dirname(fileURLToPath(import.meta.url));

function expectGolden(name: string, text: string): void {
  const file = path.join(here, "golden", name);
  if (process.env.UPDATE_GOLDEN === "1") {
    writeFileSync(file, text);
    return;
  }
  if (!existsSync(file))
    throw new Error(`no golden file ${file}: run with UPDATE_GOLDEN=1 once and review it`);
  expect(text).toBe(readFileSync(file, "utf8"));
}

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];
const sink = (name: string, port: number, params: Record<string, string> = {}): SinkEndpoint => ({
  name: name as SinkEndpoint["name"],
  host: "10.213.9.12",
  port,
  params,
});

/** Validate with the plugin's schema and render, as infra/render/index.ts renderCollector does. */
function render(block: unknown, s: SinkEndpoint, f: readonly EventField[] = fields) {
  return otelcol.render!.render({ config: otelcol.schema.parse(block), sink: s, fields: f });
}

const tuned = {
  processors: { batch: { send_batch_size: 1000, send_batch_max_size: 2000, timeout: "1s" } },
};

describe("otelcol renderer (no real Collector here: golden files, parsed back as YAML)", () => {
  it("with sink passwords set, adds the basicauth/ib_sink extension (client_auth username, password ${env:INGESTBENCH_<SINK>_PASSWORD}) and the exporter's auth.authenticator, never the value (contrib basicauthextension README and confighttp; no Collector here)", async () => {
    await withEnv(PW, () => {
      for (const [name, port, user, variable, exporter, at] of [
        ["clickhouse", 8123, "default", "INGESTBENCH_CLICKHOUSE_PASSWORD", "otlphttp/ib_clickhouse", []],
        ["loki", 3100, "ingestbench", "INGESTBENCH_LOKI_PASSWORD", "otlphttp/ib_loki", []],
        ["elasticsearch", 9200, "elastic", "INGESTBENCH_ELASTICSEARCH_PASSWORD", "elasticsearch/ib_out", []],
        ["opensearch", 9200, "admin", "INGESTBENCH_OPENSEARCH_PASSWORD", "opensearch/ib_out", ["http"]],
      ] as const) {
        const r = render({ processors: { batch: { timeout: "1s" } } }, sink(name, port));
        noSecretIn(r.text);
        const doc = parse(r.text);
        expect(doc.extensions).toEqual({
          health_check: { endpoint: "0.0.0.0:13133" },
          "basicauth/ib_sink": { client_auth: { username: user, password: `\${env:${variable}}` } },
        });
        expect(doc.service.extensions).toEqual(["health_check", "basicauth/ib_sink"]);
        const settings = at.reduce(
          (o: Record<string, unknown>, k: string) => o[k] as Record<string, unknown>,
          doc.exporters[exporter],
        );
        expect(settings.auth).toEqual({ authenticator: "basicauth/ib_sink" });
      }
    });
    await withEnv(Object.fromEntries(Object.keys(PW).map((k) => [k, undefined])), () => {
      const doc = parse(render({}, sink("elasticsearch", 9200)).text);
      expect(doc.extensions).toEqual({ health_check: { endpoint: "0.0.0.0:13133" } });
      expect(doc.service.extensions).toEqual(["health_check"]);
    });
  });

  it("ClickHouse: otlphttp JSON into INSERT ... SELECT FROM input() ... FORMAT JSONAsString, one column per verifier column", () => {
    const r = render(
      {
        ...tuned,
        exporters: {
          otlphttp: {
            timeout: "5s",
            sending_queue: { queue_size: 500, num_consumers: 4 },
            retry_on_failure: { enabled: true, max_elapsed_time: "60s" },
          },
        },
      },
      sink("clickhouse", 8123),
    );
    expectGolden("clickhouse.yaml", r.text);
    expect(r).toMatchObject({
      file: OTELCOL_CONFIG_FILE,
      command: ["--config", OTELCOL_CONFIG_FILE],
      listens: { data: 24224, metrics: 8888 },
    });
    const doc = parse(r.text);
    expect(doc.service.pipelines.logs).toEqual({
      receivers: ["fluentforward"],
      processors: ["batch"],
      exporters: ["otlphttp/ib_clickhouse"],
    });
    expect(doc.processors.batch).toEqual({ send_batch_size: 1000, send_batch_max_size: 2000, timeout: "1s" });
    const ex = doc.exporters["otlphttp/ib_clickhouse"];
    expect(ex).toMatchObject({
      encoding: "json",
      timeout: "5s",
      sending_queue: { queue_size: 500, num_consumers: 4 },
      retry_on_failure: { enabled: true, max_elapsed_time: "60s" },
    });
    const url = new URL(ex.logs_endpoint);
    expect(url.origin).toBe("http://10.213.9.12:8123");
    const sql = url.searchParams.get("query")!;
    expect(sql).toBe(clickhouseInsert("default.ib_events", fields));
    expect(sql).toMatch(
      /^INSERT INTO "default"\."ib_events" \("ts", "msg", "gen", "seq", "sent_at"\) SELECT /,
    );
    expect(sql).toContain("FROM input('body String')");
    expect(sql.endsWith("FORMAT JSONAsString")).toBe(true);
    // every verifier column is read from the attribute of the same name
    for (const c of ["ts", "msg", "gen", "seq", "sent_at"]) expect(sql).toContain(`m['${c}']`);
    // no `${` the Collector's config expansion would read
    expect(ex.logs_endpoint).not.toContain("${");
  });

  it("ClickHouse: int, float and bool fields become typed columns", () => {
    const sql = clickhouseInsert("db.t", [
      { name: "n", type: "int" },
      { name: "x", type: "float" },
      { name: "b", type: "bool" },
    ]);
    expect(sql).toContain(`toInt64(trim(BOTH '"' FROM JSONExtractRaw(m['n'], 'intValue')))`);
    expect(sql).toContain(`JSONExtractFloat(m['x'], 'doubleValue')`);
    expect(sql).toContain(`toUInt8(JSONExtractBool(m['b'], 'boolValue'))`);
    expect(sql).toMatch(/^INSERT INTO "db"\."t" \("n", "x", "b", "gen", "seq", "sent_at"\)/);
  });

  it("Elasticsearch: bodymap into params.index, the transform making the body the record map", () => {
    const r = render(
      { exporters: { elasticsearch: { retry: { max_retries: 2 } } } },
      sink("elasticsearch", 9200, { index: "logs-13" }),
    );
    expectGolden("elasticsearch.yaml", r.text);
    const doc = parse(r.text);
    expect(doc.exporters["elasticsearch/ib_out"]).toEqual({
      endpoints: ["http://10.213.9.12:9200"],
      logs_index: "logs-13",
      mapping: { mode: "bodymap" },
      retry: { max_retries: 2 },
    });
    expect(doc.service.pipelines.logs.processors).toEqual(["transform/ib_record", "batch"]);
    expect(doc.processors["transform/ib_record"].log_statements[0].statements).toEqual([
      'delete_key(log.attributes, "fluent.tag")',
      "set(log.body, log.attributes)",
      'delete_matching_keys(log.attributes, ".*")',
    ]);
  });

  it("OpenSearch: opensearchexporter, http.endpoint and bodymap", () => {
    const r = render({}, sink("opensearch", 9200));
    expectGolden("opensearch.yaml", r.text);
    expect(parse(r.text).exporters["opensearch/ib_out"]).toEqual({
      http: { endpoint: "http://10.213.9.12:9200" },
      logs_index: "ib_events",
      mapping: { mode: "bodymap" },
    });
  });

  it("Loki: otlphttp to the native OTLP endpoint (lokiexporter left contrib in 0.131.0), rendered but refused by the image entry", () => {
    const r = render({}, sink("loki", 3100));
    expectGolden("loki.yaml", r.text);
    expect(parse(r.text).exporters["otlphttp/ib_loki"]).toEqual({
      endpoint: "http://10.213.9.12:3100/otlp",
      encoding: "proto",
    });
    expect(otelcol.image!.refuses!.loki).toMatch(
      /lokiexporter left the contrib distribution in 0\.131\.0.*job/,
    );
    expect(Object.keys(otelcol.image!.refuses!)).toEqual(["loki"]);
  });
});

describe("otelcol schema and refusals", () => {
  it("VictoriaLogs: otlphttp (protobuf) into its OTLP endpoint, the record attributes as its fields (the config the local platform runs)", () => {
    const r = render(tuned, sink("victorialogs", 9428));
    expectGolden("victorialogs.yaml", r.text);
    const doc = parse(r.text);
    expect(doc.exporters).toEqual({
      "otlphttp/ib_victorialogs": {
        logs_endpoint: "http://10.213.9.12:9428/insert/opentelemetry/v1/logs",
        encoding: "proto",
      },
    });
    expect(doc.service.pipelines.logs.processors).toEqual(["batch"]);
  });

  it("fills the defaults: Forward on 0.0.0.0:24224, the metrics reader on 0.0.0.0:8888", () => {
    const c = otelcol.schema.parse({});
    expect(c.receivers.fluentforward.endpoint).toBe("0.0.0.0:24224");
    expect(c.service.telemetry.metrics.readers).toEqual([
      { pull: { exporter: { prometheus: { host: "0.0.0.0", port: 8888 } } } },
    ]);
    expect(c.version).toBe("0.165.0");
    expect(c.extensions.health_check.endpoint).toBe("0.0.0.0:13133");
    expect(otelcol.render!.accepts(c)).toEqual(["fluent-forward"]);
  });

  it.each([
    [{ receivers: { fluentforward: { port: 24224 } } }, "receivers.fluentforward"],
    [{ processors: { batch: { timeout: 5 } } }, "processors.batch.timeout"],
    [
      { processors: { batch: { send_batch_size: 100, send_batch_max_size: 10 } } },
      "processors.batch.send_batch_max_size",
    ],
    [{ exporters: { otlphttp: { sending_queue: { queue_sze: 1 } } } }, "exporters.otlphttp.sending_queue"],
    [{ exporters: { elasticsearch: { retry_on_failure: {} } } }, "exporters.elasticsearch"],
    [{ service: { telemetry: { metrics: { address: "0.0.0.0:8888" } } } }, "service.telemetry.metrics"],
    [{ service: { telemetry: { metrics: { readers: [] } } } }, "service.telemetry.metrics.readers"],
    // another release is a valid pin: the program's own --version refuses it before provisioning (E_VERSION)
    [{ version: "0.150" }, "version"],
  ])("refuses %j, naming %s", (block, field) => {
    const r = otelcol.schema.safeParse(block);
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join("."))).toContain(field);
  });

  it("refuses exporter settings the sink's exporter does not read, naming the block", () => {
    expect(() =>
      render({ exporters: { elasticsearch: { timeout: "5s" } } }, sink("clickhouse", 8123)),
    ).toThrow(ConfigurationError);
    expect(() =>
      render({ exporters: { elasticsearch: { timeout: "5s" } } }, sink("clickhouse", 8123)),
    ).toThrow(
      /collector\.otelcol\.exporters\.elasticsearch: sink clickhouse is written by the otlphttp exporter/,
    );
  });

  it("refuses a sink it cannot write into and a field the receiver would make the body", () => {
    expect(() => render({}, sink("postgres", 5432))).toThrow(/cannot write into sink "postgres"/);
    expect(() => render({}, sink("clickhouse", 8123), [{ name: "message", type: "string" }])).toThrow(
      /event field "message"/,
    );
  });
});

/**
 * The Collector's Prometheus exposition (text format 0.0.4) as its pull reader serves it: counters with the OTel Go
 * exporter's `_total` suffix, the resource as target_info, the scope labels on every sample. Names from the
 * Collector's "Internal telemetry" documentation; the values are this test's.
 */
const EXPOSITION = [
  "# HELP otelcol_exporter_queue_capacity Fixed capacity of the retry queue (in batches)",
  "# TYPE otelcol_exporter_queue_capacity gauge",
  'otelcol_exporter_queue_capacity{data_type="logs",exporter="otlphttp/ib_clickhouse",otel_scope_name="go.opentelemetry.io/collector/exporter/exporterhelper",otel_scope_version=""} 1000',
  "# HELP otelcol_exporter_queue_size Current size of the retry queue (in batches)",
  "# TYPE otelcol_exporter_queue_size gauge",
  'otelcol_exporter_queue_size{data_type="logs",exporter="otlphttp/ib_clickhouse",otel_scope_name="go.opentelemetry.io/collector/exporter/exporterhelper",otel_scope_version=""} 3',
  "# HELP otelcol_exporter_send_failed_log_records_total Number of log records in failed attempts to send to destination.",
  "# TYPE otelcol_exporter_send_failed_log_records_total counter",
  'otelcol_exporter_send_failed_log_records_total{exporter="otlphttp/ib_clickhouse",otel_scope_name="go.opentelemetry.io/collector/exporter/exporterhelper",otel_scope_version=""} 20',
  "# HELP otelcol_exporter_sent_log_records_total Number of log record successfully sent to destination.",
  "# TYPE otelcol_exporter_sent_log_records_total counter",
  'otelcol_exporter_sent_log_records_total{exporter="otlphttp/ib_clickhouse",otel_scope_name="go.opentelemetry.io/collector/exporter/exporterhelper",otel_scope_version=""} 9960',
  "# HELP otelcol_receiver_accepted_log_records_total Number of log records successfully pushed into the pipeline.",
  "# TYPE otelcol_receiver_accepted_log_records_total counter",
  'otelcol_receiver_accepted_log_records_total{otel_scope_name="go.opentelemetry.io/collector/receiver/receiverhelper",otel_scope_version="",receiver="fluentforward",transport="tcp"} 10000',
  "# HELP otelcol_receiver_refused_log_records_total Number of log records that could not be pushed into the pipeline.",
  "# TYPE otelcol_receiver_refused_log_records_total counter",
  'otelcol_receiver_refused_log_records_total{otel_scope_name="go.opentelemetry.io/collector/receiver/receiverhelper",otel_scope_version="",receiver="fluentforward",transport="tcp"} 5',
  "# HELP target_info Target metadata",
  "# TYPE target_info gauge",
  'target_info{service_instance_id="0b3c4a5e-1f2d-4c6b-9a8e-7d6c5b4a3f21",service_name="otelcol-contrib",service_version="0.159.0"} 1',
  "",
].join("\n");

describe("otelcol claims reader against the OpenTelemetry Collector's published metrics text (byte-level vector; no collector here)", () => {
  let server: Server;
  let port = 0;
  let body = EXPOSITION;
  let seenPath = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      seenPath = req.url ?? "";
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(body);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  it("maps the _total counters and the queue gauge to received, refused, written, dropped, queued", async () => {
    body = EXPOSITION;
    const c = otelcol.claims!;
    expect(c.kind).toBe("http");
    if (c.kind !== "http") return;
    expect(await c.read({ host: "127.0.0.1", port })).toEqual({
      received: 10000,
      refused: 5,
      written: 9960,
      dropped: 20,
      queued: 3,
    });
    expect(seenPath).toBe("/metrics");
  });

  it("reads the bare counter names of releases without the suffix, and adds enqueue failures to dropped", async () => {
    body =
      EXPOSITION.replaceAll("_log_records_total", "_log_records") +
      'otelcol_exporter_enqueue_failed_log_records{exporter="otlphttp/ib_clickhouse"} 7\n';
    const c = otelcol.claims!;
    if (c.kind !== "http") throw new Error("http reader expected");
    expect(await c.read({ host: "127.0.0.1", port })).toEqual({
      received: 10000,
      refused: 5,
      written: 9960,
      dropped: 27,
      queued: 3,
    });
  });

  it("fails with E_CLAIMS naming the metric when the receiver's counter is absent, and on a body that is not Prometheus text", async () => {
    const c = otelcol.claims!;
    if (c.kind !== "http") throw new Error("http reader expected");
    body = EXPOSITION.split("\n")
      .filter((l) => !l.includes("otelcol_receiver_accepted"))
      .join("\n");
    await expect(c.read({ host: "127.0.0.1", port })).rejects.toThrow(
      /otelcol metrics at http:\/\/127\.0\.0\.1:\d+\/metrics: no otelcol_receiver_accepted_log_records_total/,
    );
    body = "<html><body>404</body></html>";
    await expect(c.read({ host: "127.0.0.1", port })).rejects.toMatchObject({ code: "E_CLAIMS" });
  });
});
