/**
 * Vector config renderer (plugins/collectors/vector/render.ts). No Vector runs here (not installable on this machine): the
 * rendered vector.yaml is compared with golden files and parsed back with the `yaml` package, so each scenario
 * parameter is found under Vector's own option path (sinks.<id>.batch.max_events, ...).
 */
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import { renderCollector } from "../../../infra/render/index.ts";
import type { SinkEndpoint } from "../../../core/render.ts";
import { expectGolden } from "../../../test/helpers/golden.ts";
import { writeScenario } from "../../../test/helpers/collector-test.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];
const sink = (
  name: SinkEndpoint["name"],
  port: number,
  params: Record<string, string> = {},
): SinkEndpoint => ({ name, host: "10.213.5.12", port, params });

interface VectorDoc {
  sources: Record<string, Record<string, any>>;
  sinks: Record<string, Record<string, any>>;
}

describe("vector renderer (no real Vector here: golden files and a YAML parse)", () => {
  it("with sink passwords set, gives each sink auth: { strategy: basic, user, password: ${INGESTBENCH_<SINK>_PASSWORD} }, never the value (Vector reference's option names and variable syntax; no Vector here)", async () => {
    await withEnv(PW, () => {
      for (const [name, port, user, variable] of [
        ["clickhouse", 8123, "default", "INGESTBENCH_CLICKHOUSE_PASSWORD"],
        ["elasticsearch", 9200, "elastic", "INGESTBENCH_ELASTICSEARCH_PASSWORD"],
        ["loki", 3100, "ingestbench", "INGESTBENCH_LOKI_PASSWORD"],
      ] as const) {
        const text = renderCollector("vector", {}, sink(name, port), fields).text;
        noSecretIn(text);
        const doc = parse(text) as { sinks: Record<string, { auth?: unknown }> };
        expect(Object.values(doc.sinks)[0]!.auth).toEqual({
          strategy: "basic",
          user,
          password: `\${${variable}}`,
        });
        expect(text).toContain(`password: \${${variable}}`);
      }
    });
    await withEnv(Object.fromEntries(Object.keys(PW).map((k) => [k, undefined])), () => {
      expect(renderCollector("vector", {}, sink("loki", 3100), fields).text).not.toContain("auth:");
    });
  });

  it("renders http_server → ClickHouse as the golden file, with batch, request and buffer under Vector's option names", () => {
    const block = {
      sink: {
        batch: { max_events: 1000, timeout_secs: 1 },
        request: { concurrency: 4 },
        buffer: { type: "memory", max_events: 20000, when_full: "block" },
      },
    };
    const r = renderCollector("vector", block, sink("clickhouse", 8123), fields);
    expect(r).toMatchObject({
      file: "/etc/vector/ingestbench.yaml",
      command: ["--config", "/etc/vector/ingestbench.yaml"],
      listens: { data: 8080, metrics: 9598 },
    });
    expectGolden("vector", "http-clickhouse.yaml", r.text);
    const doc = parse(r.text) as VectorDoc;
    expect(doc.sources.ib_in).toEqual({
      type: "http_server",
      address: "0.0.0.0:8080",
      decoding: { codec: "json" },
      framing: { method: "newline_delimited" },
    });
    const out = doc.sinks.ib_out!;
    expect(out).toMatchObject({
      type: "clickhouse",
      endpoint: "http://10.213.5.12:8123",
      database: "default",
      table: "ib_events",
      inputs: ["ib_in"],
    });
    expect(out.batch).toEqual({ max_events: 1000, timeout_secs: 1 });
    expect(out.request).toEqual({ concurrency: 4 });
    expect(out.buffer).toEqual({ type: "memory", max_events: 20000, when_full: "block" });
    expect(doc.sources.ib_internal_metrics).toEqual({ type: "internal_metrics" });
    expect(doc.sinks.ib_metrics).toEqual({
      type: "prometheus_exporter",
      inputs: ["ib_internal_metrics"],
      address: "0.0.0.0:9598",
    });
  });

  it("renders fluent → Elasticsearch 8 (bulk, disk buffer, drop_newest) and socket → Loki, as golden files", () => {
    const es = renderCollector(
      "vector",
      {
        source: { fluent: {} },
        sink: {
          request: { concurrency: "adaptive" },
          buffer: { type: "disk", max_size: 536870912, when_full: "drop_newest" },
          compression: "gzip",
        },
      },
      sink("elasticsearch", 9200, { index: "logs-13" }),
      fields,
    );
    expectGolden("vector", "fluent-elasticsearch.yaml", es.text);
    const d = parse(es.text) as VectorDoc;
    expect(d.sources.ib_in).toEqual({ type: "fluent", address: "0.0.0.0:24224", mode: "tcp" });
    expect(d.sinks.ib_out).toMatchObject({
      type: "elasticsearch",
      endpoints: ["http://10.213.5.12:9200"],
      api_version: "v8",
      mode: "bulk",
      bulk: { action: "index", index: "logs-13" },
      compression: "gzip",
    });
    expect(d.sinks.ib_out!.request).toEqual({ concurrency: "adaptive" });
    expect(d.sinks.ib_out!.buffer).toEqual({ type: "disk", max_size: 536870912, when_full: "drop_newest" });
    expect(d.sinks.ib_out!.batch).toBeUndefined();

    const loki = renderCollector(
      "vector",
      { source: { socket: { port: 9000 } }, sink: { batch: { max_bytes: 1048576 } } },
      sink("loki", 3100),
      fields,
    );
    expectGolden("vector", "socket-loki.yaml", loki.text);
    const l = parse(loki.text) as VectorDoc;
    expect(l.sinks.ib_out).toMatchObject({
      type: "loki",
      endpoint: "http://10.213.5.12:3100",
      labels: { job: "ingestbench" },
      encoding: { codec: "json" },
      batch: { max_bytes: 1048576 },
    });
  });

  it("sweeps the sink's request.concurrency from a scenario matrix (collector.vector.sink.request.concurrency), each cell's value under Vector's option (no Vector runs here)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ib-vector-concurrency-"));
    try {
      const file = await writeScenario(dir, {
        name: "vector-concurrency",
        generator: "{ http-json: { batch: 100, rate: 1000 } }",
        collector: "{ vector: { sink: { request: { concurrency: 1 } } } }",
        sink: '{ clickhouse: { version: "18.16.1" } }',
        matrix: '{ collector.vector.sink.request.concurrency: [1, 4, 16, "adaptive", "none"] }',
      });
      const s = loadScenarioFile(file);
      expect(planCells(s, file, { replicates: 1 })).toHaveLength(5);
      for (const cell of s.cells) {
        const doc = parse(
          renderCollector(
            "vector",
            cell.scenario.collector!.config,
            sink("clickhouse", 8123),
            cell.scenario.event,
          ).text,
        ) as { sinks: Record<string, { type: string; request?: { concurrency?: unknown } }> };
        const out = Object.values(doc.sinks).find((x) => x.type === "clickhouse")!;
        expect(out.request?.concurrency, cell.id).toBe(
          cell.values["collector.vector.sink.request.concurrency"],
        );
      }
      expect(s.cells.map((c) => c.id)).toEqual([
        "concurrency=1",
        "concurrency=4",
        "concurrency=16",
        "concurrency=adaptive",
        "concurrency=none",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses buffer options of the other buffer type, and sinks it cannot write into, naming the field", () => {
    expect(() =>
      renderCollector("vector", { sink: { buffer: { type: "disk" } } }, sink("clickhouse", 8123), fields),
    ).toThrow(/collector\.vector\.sink\.buffer\.max_size: a disk buffer needs max_size/);
    expect(() =>
      renderCollector(
        "vector",
        { sink: { buffer: { max_size: 300000000 } } },
        sink("clickhouse", 8123),
        fields,
      ),
    ).toThrow(/sink\.buffer\.max_size: max_size applies to disk buffers/);
    expect(() =>
      renderCollector("vector", { sink: { request: { concurrency: 0 } } }, sink("clickhouse", 8123), fields),
    ).toThrow(/collector\.vector\.sink\.request\.concurrency/);
    expect(() => renderCollector("vector", {}, sink("postgres", 5432), fields)).toThrow(
      /cannot write into sink "postgres"/,
    );
  });
});
