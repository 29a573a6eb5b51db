// compareScenarios on synthetic run.json files (test/helpers/run-records.ts): the ratio and its interval, matching
// cells, eligibility over all sides, the version rules, the query metric and the command's flags.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compareCommand,
  compareScenarios,
  pairSides,
  renderScenariosComparison,
  scenarioNameOf,
  type ScenariosComparison,
} from "../../../harness/results/compare.ts";
import type { QueryCellResult, RunRecord } from "../../../harness/results/types.ts";
import { type Spec, writeRunRecord } from "../../helpers/run-records.ts";

let root = "";
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-xscenario-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const INV_OLD = "2026-11-28T10:00:00.000Z";
const INV = "2026-11-29T10:00:00.000Z";
const tight = [1000, 1010, 990, 1005, 995];
const ES = { elasticsearch: { pinned: "8.15.3", running: "8.15.3" } };
const write = (s: Spec): RunRecord => writeRunRecord(root, s);

const queryCell = (id: string, rps: number, errors = 0): QueryCellResult => ({
  id,
  statement: id.split("@")[0]!,
  concurrency: 10,
  count: 50,
  requests: 500,
  ok: 500 - errors,
  errors,
  errorSamples: [],
  rows: 500,
  elapsedMs: 500_000 / rps,
  requestsPerSecond: rps,
  latencyMs: { mean: 5, p50: 4, p99: 9, max: 12 },
});

describe("compareScenarios", () => {
  beforeAll(() => {
    // write-up 004's side-by-side: PostgreSQL (baseline) against Elasticsearch on one stack, plus an older invocation
    for (const v of [9000, 9100, 8900]) write({ stack: "q", scenario: "pg", invocation: INV_OLD, rows: v });
    for (const v of tight) write({ stack: "q", scenario: "pg", invocation: INV, rows: v });
    for (const v of tight)
      write({ stack: "q", scenario: "es", invocation: INV, rows: v * 1.5, versions: ES });
    // a failed run and one on another kernel: excluded, with reasons
    write({ stack: "q", scenario: "es", invocation: INV, rows: 99_999, status: "failed", versions: ES });
    write({ stack: "q", scenario: "es", invocation: INV, rows: 88_888, kernel: "Linux 5.10", versions: ES });
  });

  it("gives the ratio of medians with its bootstrap interval, from eligible runs of each side's latest invocation", async () => {
    const c = await compareScenarios(root, [
      { scenario: "pg", stack: "q" },
      { scenario: "es", stack: "q" },
    ]);
    expect(c.mode).toBe("scenarios");
    expect(c.sides.map((s) => [s.label, s.runIds.length, s.invocation])).toEqual([
      ["pg@q", 5, INV],
      ["es@q", 7, INV],
    ]);
    expect(c.items).toHaveLength(1);
    const [item] = c.items;
    expect(item!.baseline.values.median).toBe(1000);
    expect(item!.baseline.measured).toBe(5);
    const k = item!.contenders[0]!;
    expect(k.measured).toBe(5);
    expect(k.values.median).toBe(1500);
    expect(k.comparison!.ratio).toBeCloseTo(1.5, 10);
    expect(k.comparison!.ci![0]).toBeGreaterThan(1.4);
    expect(k.comparison!.ci![1]).toBeLessThan(1.6);
    expect(k.comparison!.change).toBe("faster");
    expect(k.comparison!.noiseFloor).toBeNull();
    // excluded: the failed run (status) and the one from another machine (environment)
    expect(c.excluded.map((x) => x.kind).sort()).toEqual(["environment", "status"]);
    expect(c.sides[1]!.excluded).toHaveLength(2);
    expect(c.excluded.find((x) => x.kind === "environment")!.reason).toMatch(
      /other environment: .*kernel=Linux 5\.10/,
    );
    expect(c.machine).toMatch(/kernel=Linux 6\.18\.44/);
    // a component only one side runs is listed, not refused
    expect(c.forced).toBe(false);
    expect(
      c.components.some((d) => d.field === "versions.elasticsearch.running" && d.values["pg@q"] === "–"),
    ).toBe(true);
    expect(c.differences.some((d) => d.kind === "version")).toBe(false);
    const text = renderScenariosComparison(c);
    expect(text).toMatch(/ratio to pg@q/);
    expect(text).toMatch(/1\.50x/);
    expect(text).toMatch(/excluded runs \(2/);
    expect(text).toContain("\nmeasured on AMD EPYC, 2 cores, kernel 6.18.44, cgroup v1\n"); // the sides' machine, in words
    expect(text).toMatch(
      /components each side runs \(compared on purpose\):\n(  .*\n)*  versions\.elasticsearch\.running: pg@q –; es@q 8\.15\.3/,
    );
    expect(text).not.toMatch(/!!/);
  });

  it("is inconclusive with fewer than 3 measured runs on a side, and gives no ratio when a side has none", async () => {
    for (const v of [1000, 1100]) write({ stack: "q", scenario: "two", invocation: INV, rows: v });
    const c = await compareScenarios(root, [
      { scenario: "pg", stack: "q" },
      { scenario: "two", stack: "q" },
    ]);
    expect(c.items[0]!.contenders[0]!.comparison!.inconclusive).toBe(true);
    write({ stack: "q", scenario: "none-ok", invocation: INV, rows: 1, status: "failed" });
    const d = await compareScenarios(root, [
      { scenario: "pg", stack: "q" },
      { scenario: "none-ok", stack: "q" },
    ]);
    expect(d.items[0]!.contenders[0]!.comparison).toBeNull();
    expect(d.items[0]!.contenders[0]!.reason).toMatch(/no measured run/);
  });

  it("matches cells by id across sides with matrices, lists the rest, and pairs single cells whatever their ids", async () => {
    for (const cell of ["batch=1000", "batch=8000"])
      for (const v of tight) write({ stack: "a", scenario: "m1", invocation: INV, rows: v, cell });
    for (const cell of ["batch=8000", "batch=50000"])
      for (const v of tight) write({ stack: "b", scenario: "m2", invocation: INV, rows: v * 0.8, cell });
    const c = await compareScenarios(root, [
      { scenario: "m1", stack: "a" },
      { scenario: "m2", stack: "b" },
    ]);
    expect(c.items.map((i) => i.item)).toEqual(["batch=8000"]);
    expect(c.items[0]!.contenders[0]!.comparison!.ratio).toBeCloseTo(0.8, 10);
    expect(c.items[0]!.contenders[0]!.comparison!.change).toBe("slower");
    expect(c.unmatched).toEqual([
      { label: "m1@a", item: "batch=1000" },
      { label: "m2@b", item: "batch=50000" },
    ]);
    // across stacks the limits are not part of the fingerprint (they differ by design)
    expect(c.differences.some((d) => d.kind === "limits")).toBe(false);

    for (const v of tight)
      write({ stack: "a", scenario: "one-collector", invocation: INV, rows: v, cell: "default" });
    for (const v of tight)
      write({
        stack: "b",
        scenario: "two-collectors",
        invocation: INV,
        rows: v * 1.12,
        cell: "collectors=2",
      });
    const d = await compareScenarios(root, [
      { scenario: "one-collector", stack: "a" },
      { scenario: "two-collectors", stack: "b" },
    ]);
    expect(d.items).toHaveLength(1);
    expect(d.items[0]!.contenders[0]!.cell).toBe("collectors=2");
    expect(d.items[0]!.contenders[0]!.comparison!.ratio).toBeCloseTo(1.12, 10);
  });

  it("refuses a component both sides run at different versions unless forced", async () => {
    for (const v of tight)
      write({ stack: "q", scenario: "pg17", invocation: INV, rows: v, postgres: "17.2" });
    await expect(
      compareScenarios(root, [
        { scenario: "pg", stack: "q" },
        { scenario: "pg17", stack: "q" },
      ]),
    ).rejects.toMatchObject({ code: "E_VERSION_MISMATCH" });
    const c = await compareScenarios(
      root,
      [
        { scenario: "pg", stack: "q" },
        { scenario: "pg17", stack: "q" },
      ],
      { force: true },
    );
    expect(c.forced).toBe(true);
    expect(renderScenariosComparison(c)).toMatch(/!! versions\.postgres\.running/);
  });

  it("compares the query phase's queries/s per query cell, with errors", async () => {
    for (const v of [100, 102, 98])
      write({
        stack: "q",
        scenario: "q1k",
        invocation: INV,
        rows: 1000,
        query: {
          sink: "clickhouse",
          tableRows: 1000,
          cells: [queryCell("count@10x50", v), queryCell("recent@10x50", v / 2)],
        },
      });
    for (const v of [50, 51, 49])
      write({
        stack: "q",
        scenario: "q50k",
        invocation: INV,
        rows: 1000,
        query: {
          sink: "clickhouse",
          tableRows: 50000,
          cells: [queryCell("count@10x50", v, 1), queryCell("other@10x50", v)],
        },
      });
    const c: ScenariosComparison = await compareScenarios(
      root,
      [
        { scenario: "q1k", stack: "q" },
        { scenario: "q50k", stack: "q" },
      ],
      { metric: "queries" },
    );
    expect(c.items.map((i) => i.item)).toEqual(["default / count@10x50"]);
    const k = c.items[0]!.contenders[0]!;
    expect(k.comparison!.ratio).toBeCloseTo(0.5, 10);
    expect(k.queryErrors).toBe(3);
    expect(c.unmatched.map((u) => u.item).sort()).toEqual([
      "default / other@10x50",
      "default / recent@10x50",
    ]);
    expect(renderScenariosComparison(c)).toMatch(/queries\/s across scenarios/);
    // one scenario's query phase across two stacks goes the same way
    for (const v of [200, 204, 196])
      write({
        stack: "r",
        scenario: "q1k",
        invocation: INV,
        rows: 1000,
        query: { sink: "clickhouse", tableRows: 1000, cells: [queryCell("count@10x50", v)] },
      });
    const d = JSON.parse(
      await compareCommand(root, { scenario: "q1k", stacks: "q,r", metric: "queries", json: true }),
    ) as ScenariosComparison;
    expect(d.sides.map((s) => s.label)).toEqual(["q1k@q", "q1k@r"]);
    expect(d.items[0]!.contenders[0]!.comparison!.ratio).toBeCloseTo(2, 10);
    // on one stack: that stack's query table (ui/query-table.ts)
    expect(await compareCommand(root, { scenario: "q1k", stacks: "q", metric: "queries" })).toMatch(
      /q1k on q, invocation .*queries\/s per query cell, concurrency × count \(concurrency: closed-loop workers, count: requests per worker\)/,
    );
    await expect(
      compareCommand(root, { scenario: "q1k", stacks: "q", metric: "queries", baseline: "latest" }),
    ).rejects.toMatchObject({ code: "E_FLAG" });
  });

  it("takes scenario names or files and pairs them with one stack or one per scenario", async () => {
    expect(scenarioNameOf("scenarios/elasticsearch-bulk-8000.yaml")).toBe("elasticsearch-bulk-8000");
    expect(scenarioNameOf("quickstart")).toBe("quickstart");
    expect(pairSides(["a.yaml", "b"], ["s"])).toEqual([
      { scenario: "a", stack: "s" },
      { scenario: "b", stack: "s" },
    ]);
    expect(pairSides(["a", "a"], ["s", "t"])).toEqual([
      { scenario: "a", stack: "s" },
      { scenario: "a", stack: "t" },
    ]);
    expect(() => pairSides(["a"], ["s"])).toThrow(/at least two scenarios/);
    expect(() => pairSides(["a", "b", "c"], ["s", "t"])).toThrow(/one stack .* or one per scenario/);
    expect(() => pairSides(["a", "a"], ["s"])).toThrow(/given twice/);
    const json = JSON.parse(
      await compareCommand(root, { scenarios: "scenarios/pg.yaml,es", stacks: "q", json: true }),
    ) as ScenariosComparison;
    expect(json.items[0]!.contenders[0]!.comparison!.ratio).toBeCloseTo(1.5, 10);
    await expect(
      compareCommand(root, { scenarios: "pg,es", scenario: "pg", stacks: "q" }),
    ).rejects.toMatchObject({ code: "E_FLAG" });
    await expect(
      compareCommand(root, { scenarios: "pg,es", stacks: "q", metric: "bogus" }),
    ).rejects.toMatchObject({ code: "E_FLAG" });
    await expect(
      compareCommand(root, { scenarios: "pg,es", stacks: "q", baseline: "latest" }),
    ).rejects.toMatchObject({ code: "E_FLAG" });
    await expect(compareCommand(root, { stacks: "q" })).rejects.toMatchObject({ code: "E_FLAG" });
    await expect(compareCommand(root, { scenarios: "pg,missing", stacks: "q" })).rejects.toMatchObject({
      code: "E_NO_RESULTS",
    });
  });
});

describe("a sweep held against a one-cell scenario (write-up 000's +12 % from a second collector)", () => {
  beforeAll(() => {
    // a 4-cell chunk_limit_records sweep on one collector, 3 replicates a cell; the two-collector scenario's one cell
    const sweep: Record<string, number> = {
      "clr=1000": 400,
      "clr=5000": 900,
      "clr=20000": 1000,
      "clr=50000": 980,
    };
    for (const [cell, v] of Object.entries(sweep))
      for (const d of [-10, 0, 10])
        write({ stack: "s", scenario: "sweep", invocation: INV, rows: v + d, cell });
    for (const v of [1110, 1120, 1130]) write({ stack: "s", scenario: "two", invocation: INV, rows: v });
    for (const v of [1130]) write({ stack: "s", scenario: "two-once", invocation: INV, rows: v });
  });

  it("pairs the sweep's best cell with the one-cell side and gives the ratio with its interval", async () => {
    const c = await compareScenarios(root, [
      { scenario: "sweep", stack: "s" },
      { scenario: "two", stack: "s" },
    ]);
    expect(c.chosenCells).toEqual([{ label: "sweep@s", cell: "clr=20000", why: "best" }]);
    expect(c.items).toHaveLength(1);
    const k = c.items[0]!.contenders[0]!;
    expect(c.items[0]!.baseline.values.median).toBe(1000);
    expect(k.comparison!.ratio).toBeCloseTo(1.12, 10);
    expect(k.comparison!.ci).not.toBeNull();
    expect(c.unmatched).toEqual([]);
    expect(renderScenariosComparison(c)).toMatch(/sweep@s: compared by its best cell clr=20000/);
  });

  it("a named cell instead of the best; a cell no sweep has is refused; one run a side says so", async () => {
    const named = await compareScenarios(
      root,
      [
        { scenario: "sweep", stack: "s" },
        { scenario: "two", stack: "s" },
      ],
      { cell: "clr=5000" },
    );
    expect(named.chosenCells).toEqual([{ label: "sweep@s", cell: "clr=5000", why: "named" }]);
    expect(named.items[0]!.contenders[0]!.comparison!.ratio).toBeCloseTo(1120 / 900, 10);
    await expect(
      compareScenarios(
        root,
        [
          { scenario: "sweep", stack: "s" },
          { scenario: "two", stack: "s" },
        ],
        { cell: "clr=7" },
      ),
    ).rejects.toThrow(/--cell clr=7: no swept side has that cell/);
    const once = await compareScenarios(root, [
      { scenario: "sweep", stack: "s" },
      { scenario: "two-once", stack: "s" },
    ]);
    expect(once.items[0]!.contenders[0]!.comparison!.reason).toMatch(/n=1|inconclusive|fewer/);
  });
});
