// ui/bench-table.ts: the table after a bench, from run.json files shaped like real ones (compareStacks reads them).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareStacks } from "../../harness/results/across-stacks.ts";
import type { RunRecord } from "../../harness/results/types.ts";
import { benchTable, benchTableWidth, sweepLines, sweepOf } from "../../ui/bench-table.ts";
import { cellAxes } from "../../ui/cell-axes.ts";
import { writeRunRecord } from "../helpers/run-records.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-bench-table-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const invocation = "2026-12-05T09:17:14.000Z";

/** Write a run and patch its record (a saturation verdict) in its run.json. */
function run(
  root: string,
  stack: string,
  cell: string,
  rows: number,
  patch?: (r: RunRecord) => void,
): RunRecord {
  const r = writeRunRecord(root, { stack, invocation, rows, cell, scenario: "sweep" });
  if (patch) {
    patch(r);
    writeFileSync(path.join(root, stack, "sweep", r.runId, "run.json"), JSON.stringify(r));
  }
  return r;
}

const saturated = (r: RunRecord): void => {
  r.summary!.saturation = {
    state: "saturated",
    label: "saturated (backpressure)",
    beganS: 4,
    evidence: "delivery p50 +400 ms/s",
    samples: 30,
  };
};

describe("ui/bench-table.ts", () => {
  it("a two-axis matrix: a knee along each axis through the best cell, never across axes in cell order", async () => {
    // the shape a newcomer's syslog-ng → ClickHouse batch × workers sweep had: cell order dips from 100 × 1 to
    // 100 × 2, which is no knee of either axis
    const root = path.join(tmp, "two-axis");
    const cells: Array<[string, number]> = [
      ["batch-lines=100,workers=1", 19_925],
      ["batch-lines=100,workers=2", 10_364],
      ["batch-lines=1000,workers=1", 60_000],
      ["batch-lines=1000,workers=2", 90_000],
      ["batch-lines=10000,workers=1", 70_000],
      ["batch-lines=10000,workers=2", 113_602],
    ];
    for (const [cell, rows] of cells) run(root, "local-2-cores", cell, rows);
    const s = sweepOf(await compareStacks(root, "sweep", ["local-2-cores"]));
    expect(s.best?.cell).toBe("batch-lines=10000,workers=2");
    expect(s.knees).toEqual([
      { axis: "batch-lines", fixed: "workers=2", cell: null, last: "batch-lines=10000,workers=2" },
      { axis: "workers", fixed: "batch-lines=10000", cell: null, last: "batch-lines=10000,workers=2" },
    ]);
    expect(s.knee).toBeNull();
    const name = cellAxes(cells.map(([c]) => c))!.label;
    expect(sweepLines(s, name).slice(0, 3)).toEqual([
      "best 10000 × 2 at 113,602 rows/s",
      "no knee along batch-lines (workers 2): rows/s still rises at 10000 × 2",
      "no knee along workers (batch-lines 10000): rows/s still rises at 10000 × 2",
    ]);
    // and where one axis flattens through the best cell, that axis names its knee
    const flat = path.join(tmp, "two-axis-flat");
    for (const [cell, rows] of [
      ["a=1,b=1", 100],
      ["a=1,b=2", 200],
      ["a=2,b=1", 150],
      ["a=2,b=2", 205],
    ] as Array<[string, number]>)
      run(flat, "local-2-cores", cell, rows);
    const f = sweepOf(await compareStacks(flat, "sweep", ["local-2-cores"]));
    expect(f.best?.cell).toBe("a=2,b=2");
    expect(f.knees.map((k) => [k.axis, k.cell])).toEqual([
      ["a", "a=1,b=2"], // along a at b=2: 200 → 205 is a rise under 5 %
      ["b", null], // along b at a=2: 150 → 205 rises
    ]);
    expect(f.knee).toBe("a=1,b=2");
  });

  it("one stack, one run a cell: best cell, the knee from single runs (said so), the first cell that saturates", async () => {
    const root = path.join(tmp, "single");
    run(root, "local-2-cores", "batch=1000", 10_000);
    run(root, "local-2-cores", "batch=8000", 20_000);
    run(root, "local-2-cores", "batch=50000", 20_500, saturated);
    run(root, "local-2-cores", "batch=90000", 19_000, saturated);
    const rows = await compareStacks(root, "sweep", ["local-2-cores"]);
    const s = sweepOf(rows);
    expect(s.best).toEqual({ cell: "batch=50000", rowsPerSecond: 20_500 });
    expect(s.knee).toBe("batch=8000"); // 20,000 → 20,500 is a rise under 5 %
    expect(s.singleRuns).toBe(true);
    expect(s.saturates).toMatchObject({ cell: "batch=50000", runs: 1, of: 1 });
    expect(sweepLines(s)).toEqual([
      "best batch=50000 at 20,500 rows/s; knee batch=8000 (rows/s stops rising after it)",
      "first cell that saturates: batch=50000, saturated (backpressure) in 1/1 run",
      "one run a cell: the knee compares single runs (a rise under 5 % is none)",
    ]);
    const text = benchTable("sweep", rows);
    const lines = text.split("\n");
    expect(lines.every((l) => l.length <= 100)).toBe(true);
    expect(lines[0]).toBe(
      "sweep on local-2-cores: median rows/s of its latest runs; ratio to the first cell, batch=1000",
    );
    // the table names the best cell in its mark column, the rows/s as recorded
    const best = lines.find((l) => l.startsWith("│ batch=50000"))!;
    expect(best).toMatch(/^│ batch=50000 │ best, saturates │ +20,500 │/);
    expect(lines.find((l) => l.startsWith("│ batch=8000"))).toMatch(/│ knee +│/);
    // no rule between rows: header, rule, 4 rows, and the box
    expect(lines.filter((l) => l.startsWith("├"))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith("│ batch="))).toHaveLength(4);
    expect(lines.at(-1)).toMatch(/^more columns with --wide: /);
  });

  it("one stack, three runs a cell: the knee is where the next cell's interval reaches 1", async () => {
    const root = path.join(tmp, "replicates");
    for (const [cell, xs] of [
      ["w=1", [10_000, 10_200, 9_900]],
      ["w=2", [19_000, 19_500, 20_000]],
      ["w=4", [19_800, 19_100, 20_300]],
      ["w=8", [30_000, 30_500, 29_000]],
    ] as const)
      for (const x of xs) run(root, "s", cell, x);
    const s = sweepOf(await compareStacks(root, "sweep", ["s"]));
    expect(s.singleRuns).toBe(false);
    expect(s.knee).toBe("w=2"); // w=4 is within w=2's interval, though w=8 rises again
    expect(s.best?.cell).toBe("w=8");
    expect(s.saturates).toBeNull();
    expect(sweepLines(s)).toHaveLength(2);
  });

  it("across stacks: one row per stack within 100 columns, --wide shows every column", async () => {
    const root = path.join(tmp, "stacks");
    run(root, "local-quarter-core", "default", 33_598);
    run(root, "local-2-cores", "default", 245_550);
    const rows = await compareStacks(root, "sweep", ["local-quarter-core", "local-2-cores"]);
    const lines = benchTable("sweep", rows).split("\n");
    expect(lines.every((l) => l.length <= 100)).toBe(true);
    expect(lines[0]).toBe("sweep: median rows/s of each stack's latest runs; ratio to local-quarter-core");
    expect(lines.find((l) => l.includes("│ local-2-cores "))).toMatch(/245,550 │ (.+ │ )?7\.31x/);
    // the cost column fits the default (issue 31: compare shows it); these runs predate it
    expect(lines.find((l) => l.includes("core-s/M rows"))).toBeDefined();
    const wide = benchTable("sweep", rows, { wide: true }).split("\n");
    expect(wide.some((l) => l.includes("rows/s/GiB"))).toBe(true);
    expect(wide.some((l) => l.startsWith("more columns"))).toBe(false);
  });
  it("an ingest sweep over two axes (write-up 001's batch × count): the cell column is headed by the axes, cells by their values", async () => {
    const root = path.join(tmp, "two-axes");
    // the cell ids harness/scenario/schema.ts makes of scenarios/http-json-batch-count.yaml's matrix
    run(root, "s", "batch=200,requests=10", 1_900);
    run(root, "s", "batch=300,requests=10", 2_700);
    run(root, "s", "batch=10,requests=1000", 950);
    run(root, "s", "batch=50,requests=50", 1_200);
    const rows = await compareStacks(root, "sweep", ["s"]);
    const lines = benchTable("sweep", rows).split("\n");
    const header = lines.find((l) => l.startsWith("│ batch × requests "));
    expect(header).toBeDefined();
    expect(lines.find((l) => l.startsWith("│ 300 × 10 "))).toMatch(/│ best +│ +2,700 │/);
    expect(lines.filter((l) => /^│ \d+ × \d+ /.test(l))).toHaveLength(4);
    expect(lines.some((l) => l.includes("│ batch=200,requests=10"))).toBe(false);
    expect(lines[0]).toBe(
      "sweep on s: median rows/s of its latest runs; ratio to the first cell, 10 × 1000 (batch × requests)",
    );
    expect(lines[2]).toMatch(/^best 300 × 10 at 2,700 rows\/s; /);
  });

  it("cellAxes: two or more axes shared by every cell, else the ids as they are", () => {
    const a = cellAxes(["batch=200,requests=10", "batch=10,requests=1000"])!;
    expect(a.heading).toBe("batch × requests");
    expect(a.label("batch=10,requests=1000")).toBe("10 × 1000");
    expect(a.label("requests=2")).toBe("requests=2");
    expect(cellAxes(["requests=1", "batch=10000,requests=110"])).toBeNull(); // clickhouse-query-load's: mixed axes
    expect(cellAxes(["batch=1000", "batch=8000"])).toBeNull(); // one axis: "batch=1000" says it already
    expect(cellAxes(["default"])).toBeNull();
    expect(cellAxes(["requests=10,batch=200", "batch=300,requests=10"])).toBeNull(); // not the same order
  });
  it("a terminal narrower than 100 columns: the table chooses its columns for the terminal's width", async () => {
    expect(benchTableWidth({ isTTY: true, columns: 72 })).toBe(72);
    expect(benchTableWidth({ isTTY: true, columns: 200 })).toBe(100);
    expect(benchTableWidth({ isTTY: false, columns: 72 })).toBe(100); // a pipe: 100
    expect(benchTableWidth({ isTTY: true })).toBe(100);
    const root = path.join(tmp, "narrow");
    run(root, "local-quarter-core", "batch=1000", 10_000);
    run(root, "local-quarter-core", "batch=8000", 20_000, saturated);
    run(root, "local-2-cores", "batch=1000", 30_000);
    run(root, "local-2-cores", "batch=8000", 41_000);
    for (const stacks of [["local-quarter-core"], ["local-quarter-core", "local-2-cores"]]) {
      const rows = await compareStacks(root, "sweep", stacks);
      const wide = benchTable("sweep", rows).split("\n");
      const narrow = benchTable("sweep", rows, { width: 72 }).split("\n");
      expect(wide.some((l) => l.length > 72)).toBe(true);
      expect(narrow.filter((l) => l.length > 72)).toEqual([]);
      // fewer columns, the same rows: rows/s stays
      const head = (ls: string[]): string[] => ls.find((l) => l.includes("rows/s │"))!.split("│");
      expect(head(narrow).length).toBeLessThan(head(wide).length);
      expect(narrow.filter((l) => l.includes("│ batch=")).length).toBe(rows.length);
      expect(narrow.at(-1)).toMatch(/^more columns with --wide: /);
    }
  });
});
