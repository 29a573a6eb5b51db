/**
 * The container-platform scenarios (write-ups 000, 001, 004, docs/write-ups.md) validated by the project's own
 * scenario loader (harness/scenario/schema.ts loadScenario) against the registered generators and every sink and
 * collector plugin's one schema (plugins/registry.ts). Each cell's collector block is then rendered
 * (infra/render/index.ts renderCollector), and the swept value is found under the collector's own setting name.
 * No collector or sink runs here.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generators } from "../../../harness/generators/index.ts";
import { loadScenario, type PluginSchemaEntry, type Scenario } from "../../../harness/scenario/schema.ts";
import { renderCollector } from "../../../infra/render/index.ts";
import { collectorPlugins, sinkPlugins } from "../../../plugins/registry.ts";

const scenariosDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../scenarios");

function load(file: string): Scenario {
  const sinks: Record<string, PluginSchemaEntry> = Object.fromEntries(
    sinkPlugins.map((p) => [p.name, p.schema]),
  );
  const collectors: Record<string, PluginSchemaEntry> = Object.fromEntries(
    collectorPlugins.map((p) => [p.name, p.schema]),
  );
  return loadScenario(path.join(scenariosDir, file), { generators, sinks, collectors });
}

const host = { host: "10.213.1.12" };

describe("container-platform scenarios (validated with the renderers' schemas; rendered per cell, no collector runs here)", () => {
  it("000's chunk_limit_records sweep: four cells, each rendered with its value in Fluentd's <buffer>", () => {
    const s = load("fluentd-griddb-chunk-limit-records.yaml");
    expect(s.cells.map((c) => c.id)).toEqual([
      "chunk_limit_records=1000",
      "chunk_limit_records=5000",
      "chunk_limit_records=20000",
      "chunk_limit_records=50000",
    ]);
    for (const cell of s.cells) {
      const { collector, sink, event } = cell.scenario;
      expect(collector?.name).toBe("fluentd");
      expect(sink).toMatchObject({
        name: "griddb",
        config: { container: "fluentdStress", containerType: "COLLECTION" },
      });
      const r = renderCollector(
        "fluentd",
        collector!.config,
        { name: "griddb", ...host, port: 8081, params: { container: "fluentdStress" } },
        event,
      );
      expect(r.text).toMatch(
        new RegExp(
          `<buffer tag>[\\s\\S]*\\n    chunk_limit_records ${cell.values["collector.fluentd.buffer.chunk_limit_records"]}\\n[\\s\\S]*</buffer>`,
        ),
      );
      expect(r.text).toContain("  workers 2\n");
    }
    expect(s.checks.map((c) => c.path)).toEqual(["ledger.lost", "ledger.duplicated", "ledger.overwritten"]);
  });

  it("000's two-collector scale-out: one cell, 4 workers per collector, chunk_limit_records 50000", () => {
    const s = load("fluentd-griddb-two-collectors.yaml");
    expect(s.cells).toHaveLength(1);
    const r = renderCollector(
      "fluentd",
      s.collector!.config,
      { name: "griddb", ...host, port: 8081, params: {} },
      s.event,
    );
    expect(r.text).toContain("  workers 4\n");
    expect(r.text).toContain("    chunk_limit_records 50000\n");
  });

  it("001's batch x count cells: 200x10, 300x10, 10x1000, 50x50 as http-json batch and requests, into Fluent Bit → ClickHouse", () => {
    const s = load("fluent-bit-clickhouse-batch-count.yaml");
    expect(
      s.cells.map(
        (c) =>
          [c.scenario.generator!.config as Record<string, unknown>].map((g) => `${g.batch}x${g.requests}`)[0],
      ),
    ).toEqual(["200x10", "300x10", "10x1000", "50x50"]);
    const r = renderCollector(
      "fluent-bit",
      s.collector!.config,
      { name: "clickhouse", ...host, port: 8123, params: {} },
      s.event,
    );
    expect(r.text).toMatch(
      /\[INPUT\]\n    Name          http\n    Listen        0\.0\.0\.0\n    Port          8888\n    Mem_Buf_Limit 64MB\n/,
    );
    expect(r.text).toContain("    Workers       2\n");
  });

  it("004's 8000-document bulk run into Elasticsearch 8.15.3, and the same client and batch into PostgreSQL", () => {
    const es = load("elasticsearch-bulk-8000.yaml");
    const pg = load("elasticsearch-bulk-8000-postgres.yaml");
    expect(es.generator).toMatchObject({
      name: "es-bulk",
      config: { batch: 8000, connections: 1, rate: "max" },
    });
    expect(es.sink).toMatchObject({ name: "elasticsearch", config: { version: "8.15.3", index: "logs-13" } });
    expect(pg.generator).toMatchObject({
      name: "pg-copy",
      config: { batch: 8000, connections: 1, rate: "max" },
    });
    expect(pg.sink.name).toBe("postgres");
    expect(pg.event).toEqual(es.event);
    expect([pg.duration.ms, pg.warmup.ms]).toEqual([es.duration.ms, es.warmup.ms]);
  });
});
