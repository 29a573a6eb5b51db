/**
 * Fluent Bit config renderer (plugins/collectors/fluent-bit/render.ts). Fluent Bit is not installed in CI (it ran once
 * on this project's machine: README.md): the rendered classic-format config is compared with golden files and parsed back as Fluent Bit reads
 * it (`[SECTION]` headers, then `key value` lines, keys case-insensitive), so each scenario parameter is found
 * under Fluent Bit's own key in the right section.
 */
import { describe, expect, it } from "vitest";
import type { EventField } from "../../../core/events/types.ts";
import { renderCollector } from "../../../infra/render/index.ts";
import type { SinkEndpoint } from "../../../core/render.ts";
import { fluentBitSchema, renderFluentBitConfig } from "./render.ts";
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

interface Section {
  name: string;
  /** keys lower-cased, as Fluent Bit compares them */
  entries: Record<string, string>;
}

function parseFluentBit(text: string): Section[] {
  const sections: Section[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const head = /^\[([A-Z]+)\]$/.exec(line);
    if (head) {
      sections.push({ name: head[1]!, entries: {} });
      return;
    }
    const cur = sections[sections.length - 1];
    if (!cur) throw new Error(`line ${i + 1}: entry before any section`);
    if (!/^ {4}\S/.test(raw)) throw new Error(`line ${i + 1}: entries are indented by 4 spaces`);
    const m = /^(\S+)\s+(.+)$/.exec(line);
    if (!m) throw new Error(`line ${i + 1}: not a key value pair: ${line}`);
    const key = m[1]!.toLowerCase();
    if (key in cur.entries) throw new Error(`line ${i + 1}: duplicate ${key}`);
    cur.entries[key] = m[2]!;
  });
  return sections;
}

function section(s: Section[], name: string): Record<string, string> {
  const all = s.filter((x) => x.name === name);
  if (all.length !== 1) throw new Error(`expected one [${name}], found ${all.length}`);
  return all[0]!.entries;
}

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];
const sink = (
  name: SinkEndpoint["name"],
  port: number,
  params: Record<string, string> = {},
): SinkEndpoint => ({ name, host: "10.213.9.12", port, params });

describe("fluent-bit renderer (no real Fluent Bit here: golden files and an INI-style parser)", () => {
  it("with sink passwords set, renders HTTP_User / HTTP_Passwd (es, loki, http) and Password (pgsql) as ${INGESTBENCH_<SINK>_PASSWORD}, never the value (Fluent Bit manual's option names and variable syntax; no Fluent Bit here)", async () => {
    await withEnv(PW, () => {
      const out = (name: SinkEndpoint["name"], port: number, params: Record<string, string> = {}) => {
        const text = renderCollector("fluent-bit", {}, sink(name, port, params), fields).text;
        noSecretIn(text);
        return text.slice(text.indexOf("[OUTPUT]"));
      };
      expect(out("elasticsearch", 9200)).toMatch(
        /\n {4}HTTP_User +elastic\n {4}HTTP_Passwd +\$\{INGESTBENCH_ELASTICSEARCH_PASSWORD\}\n/,
      );
      expect(out("loki", 3100, { user: "ib" })).toMatch(
        /\n {4}HTTP_User +ib\n {4}HTTP_Passwd +\$\{INGESTBENCH_LOKI_PASSWORD\}\n/,
      );
      expect(out("clickhouse", 8123)).toMatch(
        /\n {4}HTTP_User +default\n {4}HTTP_Passwd +\$\{INGESTBENCH_CLICKHOUSE_PASSWORD\}\n/,
      );
      const pg = out("postgres", 5432);
      expect(pg).toMatch(/\n {4}User +postgres\n {4}Password +\$\{INGESTBENCH_POSTGRES_PASSWORD\}\n/);
      expect(pg).not.toContain("HTTP_User");
    });
    await withEnv(Object.fromEntries(Object.keys(PW).map((k) => [k, undefined])), () => {
      expect(renderCollector("fluent-bit", {}, sink("elasticsearch", 9200), fields).text).not.toMatch(
        /HTTP_User|HTTP_Passwd|Password/,
      );
    });
  });

  it("renders 001's HTTP input → ClickHouse (JSONEachRow over the http output) as the golden file, parameters under Fluent Bit's names", () => {
    const block = {
      service: {
        flush: 1,
        "storage.path": "/var/lib/fluent-bit/storage",
        "storage.backlog.mem_limit": "16M",
      },
      input: {
        http: { port: 8888, mem_buf_limit: "64MB", "storage.type": "filesystem", buffer_max_size: "4M" },
      },
      output: { workers: 2, retry_limit: 3, "storage.total_limit_size": "512M" },
    };
    const r = renderCollector("fluent-bit", block, sink("clickhouse", 8123), fields);
    expect(r.file).toBe("/fluent-bit/etc/fluent-bit.conf");
    expectGolden("fluent-bit", "http-clickhouse.conf", r.text);
    const s = parseFluentBit(r.text);
    expect(section(s, "SERVICE")).toMatchObject({
      flush: "1",
      http_server: "On",
      http_port: "2020",
      "storage.path": "/var/lib/fluent-bit/storage",
      "storage.backlog.mem_limit": "16M",
      "storage.metrics": "On",
    });
    expect(section(s, "INPUT")).toMatchObject({
      name: "http",
      port: "8888",
      mem_buf_limit: "64MB",
      "storage.type": "filesystem",
      buffer_max_size: "4M",
    });
    expect(section(s, "OUTPUT")).toMatchObject({
      name: "http",
      match: "*",
      host: "10.213.9.12",
      port: "8123",
      format: "json_lines",
      json_date_key: "false",
      workers: "2",
      retry_limit: "3",
      "storage.total_limit_size": "512M",
    });
    // the INSERT names its columns: ClickHouse 18.16 fills an unnamed DEFAULT column (stored_at) with 0 otherwise
    expect(decodeURIComponent(section(s, "OUTPUT").uri!)).toBe(
      `/?query=INSERT INTO default.ib_events (${[...fields.map((f) => `"${f.name}"`), '"gen"', '"seq"', '"sent_at"'].join(", ")}) FORMAT JSONEachRow`,
    );
    expect(r.listens).toEqual({ data: 8888, metrics: 2020 });
  });

  it("renders the local platform's config with the same renderer: only the file's path differs (golden file)", () => {
    const block = fluentBitSchema.parse({
      version: "4.2.8",
      input: { http: { port: 8888, mem_buf_limit: "64MB" } },
      output: { workers: 2, retry_limit: 3 },
    });
    const input = { config: block, sink: sink("clickhouse", 8123), fields };
    const local = renderFluentBitConfig(input, "/tmp/ib-host/fluent-bit/fluent-bit.conf");
    expectGolden("fluent-bit", "http-clickhouse-local.conf", local.text);
    expect(local.file).toBe("/tmp/ib-host/fluent-bit/fluent-bit.conf");
    const container = renderFluentBitConfig(input);
    expect(container.file).toBe("/fluent-bit/etc/fluent-bit.conf");
    expect(local.text).toBe(container.text);
  });

  it("renders a forward input into Elasticsearch 8 (no mapping types), Loki and PostgreSQL (out_pgsql), as golden files", () => {
    const es = renderCollector(
      "fluent-bit",
      {
        input: { forward: { mem_buf_limit: "32MB" } },
        output: { workers: 4, buffer_size: false, retry_limit: false },
      },
      sink("elasticsearch", 9200, { index: "logs-13" }),
      fields,
    );
    expectGolden("fluent-bit", "forward-elasticsearch.conf", es.text);
    expect(section(parseFluentBit(es.text), "OUTPUT")).toMatchObject({
      name: "es",
      index: "logs-13",
      suppress_type_name: "On",
      buffer_size: "False",
      retry_limit: "False",
      workers: "4",
    });
    expect(section(parseFluentBit(es.text), "INPUT")).toMatchObject({
      name: "forward",
      port: "24224",
      mem_buf_limit: "32MB",
      "storage.type": "memory",
    });

    const loki = renderCollector("fluent-bit", { output: { workers: 1 } }, sink("loki", 3100), fields);
    expectGolden("fluent-bit", "http-loki.conf", loki.text);
    expect(section(parseFluentBit(loki.text), "OUTPUT")).toMatchObject({
      name: "loki",
      labels: "job=ingestbench",
      line_format: "json",
      workers: "1",
    });

    const pg = renderCollector(
      "fluent-bit",
      {},
      sink("postgres", 5432, { database: "bench", user: "bench" }),
      fields,
    );
    expectGolden("fluent-bit", "http-postgres.conf", pg.text);
    expect(section(parseFluentBit(pg.text), "OUTPUT")).toMatchObject({
      name: "pgsql",
      database: "bench",
      user: "bench",
      table: "ib_events",
    });
    expect(section(parseFluentBit(pg.text), "OUTPUT").workers).toBeUndefined(); // not given: Fluent Bit's default
  });

  it("sweeps the output's workers from a scenario matrix (collector.fluent-bit.output.workers), each cell's value under Fluent Bit's Workers key (no Fluent Bit runs here)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ib-fb-workers-"));
    try {
      const file = await writeScenario(dir, {
        name: "fb-workers",
        generator: "{ http-json: { batch: 100, rate: 1000 } }",
        collector: "{ fluent-bit: { output: { workers: 1 } } }",
        sink: '{ clickhouse: { version: "18.16.1" } }',
        matrix: "{ collector.fluent-bit.output.workers: [0, 1, 2, 8] }",
      });
      const s = loadScenarioFile(file);
      expect(planCells(s, file, { replicates: 1 })).toHaveLength(4);
      for (const cell of s.cells) {
        const out = section(
          parseFluentBit(
            renderCollector(
              "fluent-bit",
              cell.scenario.collector!.config,
              sink("clickhouse", 8123),
              cell.scenario.event,
            ).text,
          ),
          "OUTPUT",
        );
        expect(out.workers, cell.id).toBe(String(cell.values["collector.fluent-bit.output.workers"]));
      }
      expect(s.cells.map((c) => c.id)).toEqual(["workers=0", "workers=1", "workers=2", "workers=8"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses filesystem storage without a storage.path, unknown keys, and sinks it cannot write into, naming the field", () => {
    expect(() =>
      renderCollector(
        "fluent-bit",
        { input: { http: { "storage.type": "filesystem" } } },
        sink("clickhouse", 8123),
        fields,
      ),
    ).toThrow(/collector\.fluent-bit\.input\.http\.storage\.type: filesystem needs service\.storage\.path/);
    expect(() =>
      renderCollector("fluent-bit", { output: { Workers: 2 } }, sink("clickhouse", 8123), fields),
    ).toThrow(/collector\.fluent-bit\.output: Unrecognized key.*Workers/);
    expect(() =>
      renderCollector(
        "fluent-bit",
        { input: { http: { mem_buf_limit: "lots" } } },
        sink("clickhouse", 8123),
        fields,
      ),
    ).toThrow(/input\.http\.mem_buf_limit: .*Fluent Bit size/);
    expect(() => renderCollector("fluent-bit", {}, sink("griddb", 8081), fields)).toThrow(
      /cannot write into sink "griddb"/,
    );
  });
});
