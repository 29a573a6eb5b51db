import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cellOrder, loadScenarioFile, planCells, planSeed } from "../../../harness/runner/plan.ts";

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-plan-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function scenarioFile(name: string, generator: string, matrix: string, replicates = 3): string {
  const file = path.join(tmp, `${name}.yaml`);
  writeFileSync(file, [
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
  ].join("\n"));
  return file;
}

const order = (plans: Array<{ cell: string; replicate: number }>, r: number): string[] =>
  plans.filter((p) => p.replicate === r).map((p) => p.cell);

describe("planCells", () => {
  it("runs every cell once per replicate, replicates outermost, in a seeded shuffled order", () => {
    const file = scenarioFile("sweep", "{ pg-copy: { batch: 8000, connections: 1, rate: max, seed: 42 } }",
      "{ generator.pg-copy.batch: [1000, 2000, 4000, 8000, 16000, 32000] }", 4);
    const scenario = loadScenarioFile(file);
    const ids = scenario.cells.map((c) => c.id);
    const plans = planCells(scenario, file);
    expect(plans).toHaveLength(24);
    expect(plans.map((p) => p.replicate)).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4]);
    const orders = [1, 2, 3, 4].map((r) => order(plans, r));
    for (const o of orders) expect([...o].sort()).toEqual([...ids].sort());
    expect(new Set(orders.map((o) => o.join(" "))).size).toBeGreaterThan(1);
    // cell ids and per-cell values are those of the scenario, whatever the order
    for (const p of plans) expect((p.generator.config as { batch: number }).batch).toBe(Number(p.cell.split("=")[1]));
    // deterministic
    expect(planCells(loadScenarioFile(file), file).map((p) => `${p.cell}/${p.replicate}`)).toEqual(plans.map((p) => `${p.cell}/${p.replicate}`));
    expect(planSeed(scenario)).toBe(42);
  });

  it("seeds from the generator seed, else 1", () => {
    const file = scenarioFile("seeded", "{ pg-copy: { batch: 8000, connections: 1, rate: max, seed: 9 } }", "{ generator.pg-copy.batch: [1000, 2000, 4000] }", 2);
    const loaded = loadScenarioFile(file);
    expect(planSeed(loaded)).toBe(9);
    expect(planCells(loaded, file).map((p) => p.cell)).toEqual(cellOrder(3, 2, 9).flat().map((i) => loaded.cells[i]!.id));
    // a generator without a seed (none of the registered ones lacks one: their schemas default it)
    const scenario = { ...loaded, generator: { ...loaded.generator, config: { batch: 8000 } } };
    expect(planSeed(scenario)).toBe(1);
    const perm = cellOrder(3, 2, 1);
    expect(planCells(scenario, file).map((p) => p.cell)).toEqual(perm.flat().map((i) => scenario.cells[i]!.id));
  });

  it("honours --replicates with a single cell", () => {
    const file = scenarioFile("single", "{ pg-copy: { batch: 8000, connections: 1, rate: max, seed: 5 } }", "{}", 1);
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
