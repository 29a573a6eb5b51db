import { collectorNames, sinkNames } from "../../../plugins/registry.ts";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import {
  cellOrder,
  containerOnly,
  loadScenarioFile,
  planCells,
  planSeed,
  scenarioRegistries,
} from "../../../harness/runner/plan.ts";

const scenariosDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../scenarios");

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-plan-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function scenarioFile(name: string, generator: string, matrix: string, replicates = 3): string {
  const file = path.join(tmp, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      "description: plan test",
      "event:",
      "  - { name: ts, type: timestamp }",
      "  - { name: msg, type: string, size: 20 }",
      `generator: ${generator}`,
      "collector: none",
      'sink: { postgres: { version: "18.4.0-beta.17" } }',
      "warmup: 1s",
      "duration: 2s",
      `replicates: ${replicates}`,
      `matrix: ${matrix}`,
      "checks: []",
      "",
    ].join("\n"),
  );
  return file;
}

const order = (plans: Array<{ cell: string; replicate: number }>, r: number): string[] =>
  plans.filter((p) => p.replicate === r).map((p) => p.cell);

describe("planCells", () => {
  it("runs every cell once per replicate, replicates outermost, in a seeded shuffled order", () => {
    const file = scenarioFile(
      "sweep",
      "{ pg-copy: { batch: 8000, connections: 1, rate: max, seed: 42 } }",
      "{ generator.pg-copy.batch: [1000, 2000, 4000, 8000, 16000, 32000] }",
      4,
    );
    const scenario = loadScenarioFile(file);
    const ids = scenario.cells.map((c) => c.id);
    const plans = planCells(scenario, file);
    expect(plans).toHaveLength(24);
    expect(plans.map((p) => p.replicate)).toEqual([
      1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4,
    ]);
    const orders = [1, 2, 3, 4].map((r) => order(plans, r));
    for (const o of orders) expect([...o].sort()).toEqual([...ids].sort());
    expect(new Set(orders.map((o) => o.join(" "))).size).toBeGreaterThan(1);
    // cell ids and per-cell values are those of the scenario, whatever the order
    for (const p of plans)
      expect((p.generator.config as { batch: number }).batch).toBe(Number(p.cell.split("=")[1]));
    // deterministic
    expect(planCells(loadScenarioFile(file), file).map((p) => `${p.cell}/${p.replicate}`)).toEqual(
      plans.map((p) => `${p.cell}/${p.replicate}`),
    );
    expect(planSeed(scenario)).toBe(42);
  });

  it("seeds from the generator seed, else 1", () => {
    const file = scenarioFile(
      "seeded",
      "{ pg-copy: { batch: 8000, connections: 1, rate: max, seed: 9 } }",
      "{ generator.pg-copy.batch: [1000, 2000, 4000] }",
      2,
    );
    const loaded = loadScenarioFile(file);
    expect(planSeed(loaded)).toBe(9);
    expect(planCells(loaded, file).map((p) => p.cell)).toEqual(
      cellOrder(3, 2, 9)
        .flat()
        .map((i) => loaded.cells[i]!.id),
    );
    // a generator without a seed (none of the registered ones lacks one: their schemas default it)
    const scenario = { ...loaded, generator: { ...loaded.generator!, config: { batch: 8000 } } };
    expect(planSeed(scenario)).toBe(1);
    const perm = cellOrder(3, 2, 1);
    expect(planCells(scenario, file).map((p) => p.cell)).toEqual(
      perm.flat().map((i) => scenario.cells[i]!.id),
    );
  });

  it("honours --replicates with a single cell", () => {
    const file = scenarioFile(
      "single",
      "{ pg-copy: { batch: 8000, connections: 1, rate: max, seed: 5 } }",
      "{}",
      1,
    );
    const plans = planCells(loadScenarioFile(file), file, { replicates: 3 });
    expect(plans.map((p) => `${p.cell}/${p.replicate}`)).toEqual(["default/1", "default/2", "default/3"]);
  });
});

describe("cellOrder", () => {
  it("is deterministic for a seed, a permutation per replicate, and differs across replicates for ≥ 3 cells", () => {
    for (const cells of [3, 5, 12]) {
      const a = cellOrder(cells, 6, 42);
      expect(cellOrder(cells, 6, 42)).toEqual(a);
      const identity = Array.from({ length: cells }, (_, i) => i);
      for (const perm of a) expect([...perm].sort((x, y) => x - y)).toEqual(identity);
      expect(new Set(a.map((p) => p.join(","))).size).toBeGreaterThan(1);
    }
    expect(cellOrder(8, 3, 1)).not.toEqual(cellOrder(8, 3, 2));
    expect(cellOrder(1, 2, 9)).toEqual([[0], [0]]);
    expect(cellOrder(0, 1, 9)).toEqual([[]]);
  });
});

/** A scenario with a collector, written to the temp dir. */
function pipelineFile(
  name: string,
  generator: string,
  collector: string,
  sink: string,
  matrix = "{}",
): string {
  const file = path.join(tmp, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      "event:",
      "  - { name: msg, type: string, size: 20 }",
      `generator: ${generator}`,
      `collector: ${collector}`,
      `sink: ${sink}`,
      "duration: 2s",
      "replicates: 1",
      `matrix: ${matrix}`,
      "",
    ].join("\n"),
  );
  return file;
}

describe("scenarios of the container platforms (collector renderers and container sinks registered beside the local components)", () => {
  it("registers the union: local components, Fluentd/Fluent Bit/Vector renderers' schemas, Elasticsearch/GridDB/Loki sinks", () => {
    const r = scenarioRegistries();
    // exactly the registry's plugins (plugins/registry.ts), so a new plugin needs no edit here
    expect(Object.keys(r.collectors).sort()).toEqual([...collectorNames].sort());
    expect(Object.keys(r.sinks).sort()).toEqual([...sinkNames].sort());
    expect(Object.keys(r.collectors)).toEqual(
      expect.arrayContaining(["fluent-bit", "fluentd", "rsyslog", "syslog-ng", "vector"]),
    );
    expect(Object.keys(r.sinks)).toEqual(
      expect.arrayContaining(["clickhouse", "elasticsearch", "griddb", "loki", "postgres"]),
    );
    expect(["vector", "griddb", "elasticsearch", "loki"].every(containerOnly)).toBe(true);
    // fluentd and fluent-bit run an installed program locally (core/program.ts) as well as their images
    expect(
      ["postgres", "clickhouse", "syslog-ng", "rsyslog", "mongodb", "fluentd", "fluent-bit"].some(
        containerOnly,
      ),
    ).toBe(false);
  });

  it("loads and plans 000's, 001's and 004's scenarios: each cell's collector block parsed by the renderer's schema", () => {
    const f = path.join(scenariosDir, "fluentd-griddb-chunk-limit-records.yaml");
    const plans = planCells(loadScenarioFile(f), f, { replicates: 1 });
    const byCell = new Map(plans.map((p) => [p.cell, p]));
    for (const n of [1000, 5000, 20000, 50000]) {
      const p = byCell.get(`chunk_limit_records=${n}`)!;
      expect(p.collector?.name).toBe("fluentd");
      // the renderer's schema filled its defaults (monitor_agent port) and kept Fluentd's own names
      expect(p.collector?.config).toMatchObject({
        system: { workers: 2 },
        buffer: { "@type": "memory", chunk_limit_records: n, chunk_limit_size: "64MB" },
        monitor_agent: { port: 24220 },
      });
      expect(p.sink).toEqual({
        name: "griddb",
        config: {
          version: "5.6.0",
          cluster: "myCluster",
          database: "public",
          container: "fluentdStress",
          containerType: "COLLECTION",
        },
      });
    }
    const two = path.join(scenariosDir, "fluentd-griddb-two-collectors.yaml");
    expect(
      planCells(loadScenarioFile(two), two, { replicates: 1 }).map((p) => p.collector?.config),
    ).toMatchObject([{ system: { workers: 4 } }]);
    const fb = path.join(scenariosDir, "fluent-bit-clickhouse-batch-count.yaml");
    expect(planCells(loadScenarioFile(fb), fb, { replicates: 1 }).map((p) => p.collector?.name)).toEqual(
      Array(4).fill("fluent-bit"),
    );
    const es = path.join(scenariosDir, "elasticsearch-bulk-8000.yaml");
    expect(planCells(loadScenarioFile(es), es, { replicates: 1 })[0]).toMatchObject({
      collector: null,
      sink: { name: "elasticsearch", config: { index: "logs-13", shards: 1 } },
    });
  });

  it("checks a renderer's block at its line with the collector's own setting names", () => {
    const file = pipelineFile(
      "bad-buffer",
      "{ fluent-forward: { seed: 1 } }",
      "{ fluentd: { buffer: { chunk_limit_records: 0 } } }",
      "{ griddb: {} }",
    );
    expect(() => loadScenarioFile(file)).toThrow(
      new RegExp(
        `${file}:5:\\d+: collector\\.fluentd\\.buffer\\.chunk_limit_records: number must be greater than 0`,
      ),
    );
    const unknown = pipelineFile(
      "unknown-sink",
      "{ fluent-forward: { seed: 1 } }",
      "{ fluentd: {} }",
      "{ mongodb: {} }",
    );
    expect(() => loadScenarioFile(unknown)).toThrow(
      `unknown sink "mongodb"; known sinks: ${[...sinkNames].sort().join(", ")}`,
    );
  });

  it("pairs a renderer's input with the generator and its outputs with the sink (per cell), before anything runs", () => {
    const httpIntoForward = pipelineFile(
      "pair-gen",
      "{ http-json: { seed: 1 } }",
      "{ fluentd: { source: { forward: {} } } }",
      "{ griddb: {} }",
    );
    expect(() => planCells(loadScenarioFile(httpIntoForward), httpIntoForward)).toThrow(
      /collector "fluentd" receives fluent-forward, not the "http-json" generator/,
    );
    const sample = pipelineFile(
      "pair-sample",
      "{ fluent-forward: { seed: 1 } }",
      "{ fluentd: { source: { sample: { events_per_second: 1000 } } } }",
      "{ griddb: {} }",
    );
    // a collector input that makes the load itself beside a generator is refused by the scenario schema (E_GENERATOR_NONE)
    expect(() => planCells(loadScenarioFile(sample), sample)).toThrow(
      /collector\.fluentd\.source\.sample \(in_sample\) makes the load itself: write generator: none instead of generator "fluent-forward"/,
    );
    const fbIntoGriddb = pipelineFile(
      "pair-sink",
      "{ http-json: { seed: 1 } }",
      "{ fluent-bit: {} }",
      "{ griddb: {} }",
    );
    expect(() => planCells(loadScenarioFile(fbIntoGriddb), fbIntoGriddb)).toThrow(
      /collector "fluent-bit" writes into clickhouse, elasticsearch, loki, postgres, not into sink "griddb"/,
    );
    // a sink the renderer knows but the collector's image refuses (catalog `refuses`) is refused before anything runs
    const otelIntoLoki = pipelineFile(
      "pair-refused",
      "{ fluent-forward: { seed: 1 } }",
      "{ otelcol: {} }",
      "{ loki: {} }",
    );
    expect(() => planCells(loadScenarioFile(otelIntoLoki), otelIntoLoki)).toThrow(
      /collector "otelcol" writes into clickhouse, elasticsearch, opensearch, victorialogs, not into sink "loki" \(lokiexporter left/,
    );
    // a matrix that switches Vector's source: the cell whose input the generator cannot feed is named
    const perCell = pipelineFile(
      "pair-cell",
      "{ fluent-forward: { seed: 1 } }",
      "{ vector: { source: { fluent: {} } } }",
      '{ clickhouse: { version: "25.8" } }',
      "[ { collector.vector.source: { fluent: {} } }, { collector.vector.source: { http_server: {} } } ]",
    );
    expect(() => planCells(loadScenarioFile(perCell), perCell)).toThrow(
      /pair-cell\.yaml:\d+:\d+: generator\.fluent-forward: collector "vector" receives http-json, not the "fluent-forward" generator \(cell source=http_server\)/,
    );
    const ok = pipelineFile(
      "pair-ok",
      "{ fluent-forward: { seed: 1 } }",
      "{ vector: { source: { fluent: {} } } }",
      '{ clickhouse: { version: "25.8" } }',
    );
    expect(planCells(loadScenarioFile(ok), ok)).toHaveLength(1);
  });
});

describe("matrix keys into settings whose names contain dots", () => {
  it("varies rsyslog's queue.workerThreads as collector.rsyslog.queue.workerThreads (longest key wins at each level)", () => {
    const text = readFileSync(path.join(scenariosDir, "rsyslog-postgres.yaml"), "utf8").replace(
      /^matrix:.*$/m,
      "matrix: { collector.rsyslog.queue.workerThreads: [1, 4] }",
    );
    const file = path.join(tmp, "rsyslog-workers.yaml");
    writeFileSync(file, text);
    const s = loadScenarioFile(file);
    expect(s.cells.map((c) => c.id)).toEqual(["queue.workerThreads=1", "queue.workerThreads=4"]);
    expect(
      s.cells.map((c) => (c.scenario.collector!.config as Record<string, unknown>)["queue.workerThreads"]),
    ).toEqual([1, 4]);
    // a path that names nothing is still refused at its line, naming what is there
    writeFileSync(file, text.replace(/^matrix:.*$/m, "matrix: { collector.rsyslog.queue.workers: [1, 4] }"));
    expect(() => loadScenarioFile(file)).toThrow(
      /"collector\.rsyslog\.queue\.workers" names no field of this scenario.*queue\.workerThreads/s,
    );
  });
});
