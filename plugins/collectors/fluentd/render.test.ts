/**
 * Fluentd config renderer (plugins/collectors/fluentd/render.ts). No Fluentd runs here (not installable on this machine): the
 * rendered fluent.conf is compared with golden files and parsed back with a small directive parser written for
 * this test (Fluentd's syntax: `<directive arg>` ... `</directive>`, one `name value` parameter per line, `#`
 * comments), so each scenario parameter is found under Fluentd's own name in the right section.
 */
import { describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import { fluentdSchema, renderFluentdConfig, sampleRate } from "./render.ts";
import { renderCollector } from "../../../infra/render/index.ts";
import type { SinkEndpoint } from "../../../core/render.ts";
import { expectGolden } from "../../../test/helpers/golden.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import path from "node:path";
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

const scenariosDir = path.resolve(import.meta.dirname, "../../../scenarios");

interface Directive {
  name: string;
  arg: string;
  params: Record<string, string>;
  children: Directive[];
}

/** Parse Fluentd's directive syntax into a tree; throws on unbalanced or duplicate entries. */
function parseFluentd(text: string): Directive {
  const root: Directive = { name: "root", arg: "", params: {}, children: [] };
  const stack = [root];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const top = stack[stack.length - 1]!;
    const close = /^<\/([a-z_]+)>$/.exec(line);
    if (close) {
      if (top.name !== close[1]) throw new Error(`line ${i + 1}: </${close[1]}> closes <${top.name}>`);
      stack.pop();
      return;
    }
    const open = /^<([a-z_]+)(?:\s+([^>]*))?>$/.exec(line);
    if (open) {
      const d: Directive = { name: open[1]!, arg: open[2] ?? "", params: {}, children: [] };
      top.children.push(d);
      stack.push(d);
      return;
    }
    const m = /^(@?[a-z_]+)\s+(.+)$/.exec(line);
    if (!m) throw new Error(`line ${i + 1}: not a parameter: ${line}`);
    if (m[1]! in top.params) throw new Error(`line ${i + 1}: duplicate ${m[1]}`);
    top.params[m[1]!] = m[2]!;
  });
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]!.name}>`);
  return root;
}

function find(d: Directive, name: string, type?: string): Directive[] {
  return d.children.filter((c) => c.name === name && (type === undefined || c.params["@type"] === type));
}
function one(d: Directive, name: string, type?: string): Directive {
  const all = find(d, name, type);
  if (all.length !== 1)
    throw new Error(`expected one <${name}${type ? ` @type ${type}` : ""}>, found ${all.length}`);
  return all[0]!;
}
/** The value of a Fluentd double-quoted string. */
function unquote(v: string): string {
  expect(v.startsWith('"') && v.endsWith('"')).toBe(true);
  return v.slice(1, -1).replace(/\\(["\\])/g, "$1");
}

// write-up 000's event: six fields (seq is appended by the sample input)
const fields000: EventField[] = [
  { name: "host", type: "string", size: 8 },
  { name: "method", type: "string", size: 3 },
  { name: "path", type: "string", size: 13 },
  { name: "code", type: "int" },
  { name: "size", type: "int" },
  { name: "agent", type: "string", size: 14 },
];
const griddb: SinkEndpoint = {
  name: "griddb",
  host: "10.213.7.12",
  port: 8081,
  params: { cluster: "myCluster", container: "fluentdStress" },
};
const clickhouse: SinkEndpoint = {
  name: "clickhouse",
  host: "10.213.7.12",
  port: 8123,
  params: { database: "default", table: "ib_events" },
};

const block000 = {
  system: { workers: 2 },
  source: { sample: { events_per_second: 150000, size: 250 } },
  buffer: {
    chunk_limit_records: 50000,
    chunk_limit_size: "64MB",
    total_limit_size: "4GB",
    flush_mode: "interval",
    flush_interval: "1s",
    flush_thread_count: 8,
    flush_thread_interval: 0.1,
    overflow_action: "throw_exception",
    retry_type: "periodic",
    retry_wait: "1s",
    retry_max_times: 3,
  },
  match: { slow_flush_log_threshold: 20.0 },
};

describe("fluentd renderer (no real Fluentd here: golden files and a directive parser)", () => {
  it("with sink passwords set, renders out_http's <auth> (method basic, username, password) and out_elasticsearch's user / password as \"#{ENV['INGESTBENCH_<SINK>_PASSWORD']}\", never the value (Fluentd docs' parameter names and embedded Ruby; no Fluentd here)", async () => {
    await withEnv(PW, () => {
      const ch = renderCollector("fluentd", {}, clickhouse, fields000).text;
      noSecretIn(ch);
      expect(ch).toContain(
        `  <auth>\n    method basic\n    username "default"\n    password "#{ENV['INGESTBENCH_CLICKHOUSE_PASSWORD']}"\n  </auth>\n`,
      );
      const es = renderCollector(
        "fluentd",
        {},
        { name: "elasticsearch", host: "10.213.7.12", port: 9200, params: {} },
        fields000,
      ).text;
      noSecretIn(es);
      expect(es).toContain(`  user "elastic"\n  password "#{ENV['INGESTBENCH_ELASTICSEARCH_PASSWORD']}"\n`);
      const m = one(parseFluentd(es), "match");
      expect(unquote(m.params.password!)).toBe("#{ENV['INGESTBENCH_ELASTICSEARCH_PASSWORD']}");
    });
    await withEnv(Object.fromEntries(Object.keys(PW).map((k) => [k, undefined])), () => {
      expect(renderCollector("fluentd", {}, clickhouse, fields000).text).not.toContain("<auth>");
    });
  });

  it("renders 000's sample → GridDB config as the golden file, with every buffer parameter under its own name", () => {
    const config = fluentdSchema.parse(block000);
    const r = renderFluentdConfig({ config, sink: griddb, fields: fields000 });
    expect(r.file).toBe("/fluentd/etc/fluent.conf");
    expectGolden("fluentd", "sample-griddb.conf", r.text);

    const root = parseFluentd(r.text);
    expect(one(root, "system").params.workers).toBe("2");
    const match = one(root, "match");
    expect(match.arg).toBe("**");
    expect(match.params).toMatchObject({
      "@type": "griddb",
      host: '"http://10.213.7.12:8081/"',
      container: '"fluentdStress"',
      slow_flush_log_threshold: "20",
    });
    const buffer = one(match, "buffer");
    expect(buffer.arg).toBe("tag"); // fluent-plugin-griddb refuses a buffered output without tag in chunk_keys
    for (const [k, v] of Object.entries(block000.buffer)) expect(buffer.params[k], k).toBe(String(v));
    expect(buffer.params["@type"]).toBe("memory");
    expect(one(root, "source", "monitor_agent").params.port).toBe("24220");
    // monitor_agent per worker: port + worker id (in_monitor_agent.rb), all listed for the platforms to publish
    expect(r.listens).toEqual({ data: 24224, metrics: 24220, metricsPorts: [24220, 24221] });
  });

  it("renders in_sample so that workers × rate × size is the events/s the scenario asks for", () => {
    for (const [eps, size, workers] of [
      [150000, 250, 2],
      [15000, 1, 1],
      [160000, 200, 4],
      [1000, 1000, 1],
    ] as const) {
      const config = fluentdSchema.parse({
        system: { workers },
        source: { sample: { events_per_second: eps, size } },
      });
      const sample = one(
        parseFluentd(renderFluentdConfig({ config, sink: griddb, fields: fields000 }).text),
        "source",
        "sample",
      );
      expect(Number(sample.params.rate) * Number(sample.params.size) * workers).toBe(eps);
      expect(Number(sample.params.size)).toBe(size);
      expect(sample.params.auto_increment_key).toBe("seq");
    }
    expect(sampleRate(150000, 250, 2)).toBe(300);
    expect(() => sampleRate(150000, 200, 4)).toThrow(
      /not a whole multiple of workers × size = 4 × 200.*multiple of 800/,
    );
    expect(() => sampleRate(100, 200, 1)).toThrow(/events_per_second 100/);
  });

  it("puts the fields, then gen (per worker, offset by genBase), then seq and sent_at in the sample rows, in GridDB's column order", () => {
    const config = fluentdSchema.parse({
      system: { workers: 2 },
      source: { sample: { events_per_second: 2000, size: 10 } },
    });
    const root = parseFluentd(
      renderFluentdConfig({ config, sink: griddb, fields: fields000, genBase: 2 }).text,
    );
    const sampleText = unquote(one(root, "source", "sample").params.sample!);
    expect(sampleText).toContain('"gen":#{worker_id.to_i + 2}');
    // as Fluentd evaluates it for worker 1: embedded Ruby replaced by its value
    const record = JSON.parse(sampleText.replace("#{worker_id.to_i + 2}", String(1 + 2))) as Record<
      string,
      unknown
    >;
    expect(Object.keys(record)).toEqual([...fields000.map((f) => f.name), "gen"]);
    expect(record.gen).toBe(3);
    expect(record.path).toHaveLength(13);
    const transformer = one(root, "filter", "record_transformer");
    expect(transformer.arg).toBe("ib.sample");
    expect(one(transformer, "record").params.sent_at).toMatch(
      /^\$\{time\.getutc\.strftime\('%Y-%m-%dT%H:%M:%S\.%LZ'\)\}$/,
    );
  });

  it("renders a forward source into ClickHouse through out_http (JSONEachRow), as the golden file", () => {
    const r = renderCollector(
      "fluentd",
      { source: { forward: { port: 24224 } }, buffer: { chunk_limit_records: 8000, flush_interval: "0.5" } },
      clickhouse,
      fields000,
    );
    expectGolden("fluentd", "forward-clickhouse.conf", r.text);
    const root = parseFluentd(r.text);
    expect(one(root, "source", "forward").params.port).toBe("24224");
    const match = one(root, "match", "http");
    // the INSERT names its columns: ClickHouse 18.16 left stored_at 0 without them (a real run here)
    expect(decodeURIComponent(unquote(match.params.endpoint!))).toBe(
      'http://10.213.7.12:8123/?query=INSERT INTO default.ib_events ("host", "method", "path", "code", "size", "agent", "gen", "seq", "sent_at") FORMAT JSONEachRow',
    );
    expect(one(match, "format").params["@type"]).toBe("json");
    expect(one(match, "buffer").params).toMatchObject({ chunk_limit_records: "8000", flush_interval: "0.5" });
  });

  it("fixes what a real Fluentd 1.12.0 showed: its own log events kept out of the sink, stable @ids, timestamps as epoch ms for ClickHouse", () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string", size: 20 },
    ];
    const r = renderCollector("fluentd", { source: { forward: {} } }, clickhouse, fields);
    const root = parseFluentd(r.text);
    // `<match **>` took Fluentd's fluent.* log events and ClickHouse refused their chunks whole ("Unknown field … pid")
    const label = one(root, "label");
    expect(label.arg).toBe("@FLUENT_LOG");
    expect(one(label, "match", "null").params["@id"]).toBe("ib_fluent_log");
    // monitor_agent names the outputs by @id, the same in every worker and run (else object:<hex>)
    expect(one(root, "match", "http").params["@id"]).toBe("ib_sink");
    expect(one(root, "system").params.root_dir).toBe("/fluentd/buffer/root");
    // "Unsigned type must not contain '-' symbol … sent_at": ISO text turned into UInt64 epoch ms before out_http
    const record = one(one(root, "filter", "record_transformer"), "record").params;
    expect(Object.keys(record)).toEqual(["ts", "sent_at"]);
    expect(record.sent_at).toBe(
      "${record['sent_at'].is_a?(String) ? (Time.iso8601(record['sent_at']).to_r * 1000).to_i : record['sent_at']}",
    );
  });

  it("renders the local platform's config with the same renderer, only the paths differ (golden file)", () => {
    const config = fluentdSchema.parse({
      system: { workers: 2 },
      source: { forward: {} },
      buffer: { "@type": "file", chunk_limit_records: 1000, flush_thread_count: 8 },
    });
    const input = { config, sink: clickhouse, fields: fields000 };
    const local = renderFluentdConfig(input, {
      file: "/tmp/ib-host/fluent.conf",
      buffer: "/tmp/ib-host/fluentd/ib",
      root: "/tmp/ib-host/fluentd/root",
    });
    expectGolden("fluentd", "forward-clickhouse-local.conf", local.text);
    expect(local.file).toBe("/tmp/ib-host/fluent.conf");
    const container = renderFluentdConfig(input);
    expect(container.file).toBe("/fluentd/etc/fluent.conf");
    const strip = (t: string) => t.replaceAll("/tmp/ib-host/fluentd", "/fluentd/buffer");
    expect(strip(local.text)).toBe(container.text);
  });

  it("renders an http source into Elasticsearch, as the golden file", () => {
    const es: SinkEndpoint = {
      name: "elasticsearch",
      host: "10.213.7.12",
      port: 9200,
      params: { index: "logs-13" },
    };
    const r = renderCollector(
      "fluentd",
      { source: { http: {} }, buffer: { "@type": "file", chunk_limit_size: "8m", flush_thread_count: 2 } },
      es,
      fields000,
    );
    expectGolden("fluentd", "http-elasticsearch.conf", r.text);
    const match = one(parseFluentd(r.text), "match", "elasticsearch");
    expect(match.params).toMatchObject({ index_name: '"logs-13"', port: "9200", suppress_type_name: "true" });
    expect(one(match, "buffer").params).toMatchObject({
      "@type": "file",
      path: "/fluentd/buffer/ib",
      chunk_limit_size: "8m",
      flush_thread_count: "2",
    });
  });

  it("renders scenarios/fluentd-griddb-sample.yaml (generator: none) with in_sample's published parameters only (Fluentd is not installed in CI: lib/fluent/plugin/in_sample.rb's config_params)", () => {
    const file = path.join(scenariosDir, "fluentd-griddb-sample.yaml");
    const s = loadScenarioFile(file);
    expect(s.generator).toBeNull();
    const [plan] = planCells(s, file, { replicates: 1 });
    expect(plan!.selfLoad).toMatchObject({ collector: "fluentd", input: "in_sample", generatorsPerHost: 2 });
    const r = renderCollector("fluentd", s.collector!.config, griddb, s.event, 512);
    const src = one(parseFluentd(r.text), "source", "sample");
    // in_sample's config_params (fluent/fluentd lib/fluent/plugin/in_sample.rb): tag, size, rate, auto_increment_key,
    // suspend (deprecated), sample (alias dummy); @type is the directive's
    const published = new Set([
      "@type",
      "tag",
      "size",
      "rate",
      "auto_increment_key",
      "suspend",
      "sample",
      "dummy",
    ]);
    expect(Object.keys(src.params).filter((k) => !published.has(k))).toEqual([]);
    // rate and size are integers (config_param :integer); 2 workers × rate 300 × size 250 = 150000 events/s
    expect(src.params).toMatchObject({
      tag: "ib.sample",
      size: "250",
      rate: "300",
      auto_increment_key: "seq",
    });
    // sample is one JSON hash (in_sample: "An array of JSON hashes or a single JSON hash"); gen per worker from genBase
    const sampleText = unquote(src.params.sample!);
    expect(sampleText).toContain('"gen":#{worker_id.to_i + 512}');
    expect(JSON.parse(sampleText.replace("#{worker_id.to_i + 512}", "513"))).toMatchObject({ gen: 513 });
    expect(one(parseFluentd(r.text), "system").params.workers).toBe("2");
    // idle (the deploy-time config of a docker stack, RenderInput.idle): no sample input, nothing else changed
    const idle = renderCollector("fluentd", s.collector!.config, griddb, s.event, 512, { idle: true });
    expect(find(parseFluentd(idle.text), "source", "sample")).toEqual([]);
    expect(find(parseFluentd(idle.text), "source", "monitor_agent")).toHaveLength(1);
    expect(idle.text).not.toContain("worker_id");
    const withoutSource = r.text.replace(
      /# \d+ events\/s = [^\n]*\n<source>\n {2}@type sample\n[\s\S]*?<\/filter>\n\n/,
      "",
    );
    expect(idle.text.replace(/# the sample input is left out[^\n]*\n\n/, "")).toBe(withoutSource);
  });

  it("renders every cell of scenarios/fluentd-griddb-concurrency-sweep.yaml with workers in <system> and flush_thread_count in <buffer>, the rest of 000's buffer unchanged", () => {
    const file = path.join(scenariosDir, "fluentd-griddb-concurrency-sweep.yaml");
    const s = loadScenarioFile(file);
    expect(planCells(s, file, { replicates: 1 })).toHaveLength(12);
    const seen = new Set<string>();
    for (const cell of s.cells) {
      const root = parseFluentd(
        renderCollector("fluentd", cell.scenario.collector!.config, griddb, cell.scenario.event).text,
      );
      const buffer = one(one(root, "match", "griddb"), "buffer");
      expect(one(root, "system").params.workers, cell.id).toBe(
        String(cell.values["collector.fluentd.system.workers"]),
      );
      expect(buffer.params.flush_thread_count, cell.id).toBe(
        String(cell.values["collector.fluentd.buffer.flush_thread_count"]),
      );
      expect(buffer.params).toMatchObject({
        chunk_limit_records: "50000",
        chunk_limit_size: "64MB",
        flush_interval: "1s",
        flush_thread_interval: "0.1",
        overflow_action: "throw_exception",
      });
      seen.add(cell.id);
    }
    expect(seen).toContain("workers=2,flush_thread_count=8"); // write-up 000's own cell
    expect(seen.size).toBe(12);
  });

  it("refuses bad blocks with the field named, and sinks it cannot write into", () => {
    expect(() =>
      renderCollector("fluentd", { buffer: { chunk_limit_records: 0 } }, griddb, fields000),
    ).toThrow(/collector\.fluentd\.buffer\.chunk_limit_records/);
    expect(() =>
      renderCollector("fluentd", { buffer: { chunk_limit_size: "64 megs" } }, griddb, fields000),
    ).toThrow(/collector\.fluentd\.buffer\.chunk_limit_size: .*Fluentd size/);
    expect(() => renderCollector("fluentd", { buffer: { chunk_records: 5 } }, griddb, fields000)).toThrow(
      /Unrecognized key.*chunk_records/,
    );
    expect(() =>
      renderCollector("fluentd", { source: { forward: {}, http: {} } }, griddb, fields000),
    ).toThrow(/exactly one source/);
    expect(() =>
      renderCollector("fluentd", {}, { name: "loki", host: "h", port: 3100, params: {} }, fields000),
    ).toThrow(/cannot write into sink "loki"/);
    expect(() =>
      renderCollector("fluentd", {}, { ...griddb, params: { container: "a#{`id`}" } }, fields000),
    ).toThrow(/sink\.container/);
  });
});
