import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { comparisonTable } from "../../../harness/report/table.ts";
import { compareStacks, type StackRow } from "../../../harness/results/across-stacks.ts";
import {
  columnContext,
  fitColumns,
  STACK_COLUMNS,
  stackColumns,
  terminalWidth,
} from "../../../harness/results/columns.ts";
import { p99Cell } from "../../../harness/results/format.ts";
import { renderComparison } from "../../../ui/comparison.ts";
import { writeRunRecord } from "../../helpers/run-records.ts";

let root = "";
let plain: StackRow[] = [];
let sweep: StackRow[] = [];
const INV = "2026-11-29T10:00:00.000Z";

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-columns-"));
  for (const v of [1000, 1010, 990]) writeRunRecord(root, { stack: "quarter", invocation: INV, rows: v });
  for (const v of [1200, 1210, 1190])
    writeRunRecord(root, { stack: "half", invocation: INV, rows: v, cores: 0.5 });
  writeRunRecord(root, { stack: "uncapped", invocation: INV, rows: 1500, cores: null, memoryGiB: null });
  for (const cell of ["batch=100", "batch=1000"]) {
    for (const v of [1000, 1010, 990])
      writeRunRecord(root, { stack: "sweep", invocation: INV, rows: cell === "batch=100" ? v : v * 3, cell });
  }
  plain = await compareStacks(root, "quickstart", ["quarter", "half", "uncapped"]);
  sweep = await compareStacks(root, "quickstart", ["sweep"]);
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The cells of a cli-table3 table's rows ("│ a │ b │"), header first. */
function terminalCells(text: string): string[][] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("│"))
    .map((l) =>
      l
        .split("│")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}

describe("one column definition for the terminal table and the report", () => {
  it("the terminal table with --wide and the report's table have the same header, from STACK_COLUMNS, CPU ms/1k rows included", () => {
    for (const rows of [plain, sweep]) {
      const [termHead] = terminalCells(renderComparison("quickstart", rows, { wide: true }));
      const report = comparisonTable(rows);
      const ctx = columnContext(rows);
      expect(termHead).toEqual(stackColumns("terminal", ctx, { wide: true }).map((c) => c.header(ctx)));
      expect(report.head).toEqual(stackColumns("report", ctx).map((c) => c.header(ctx)));
      expect(report.head).toEqual(termHead);
      expect(report.head).toContain("CPU ms/1k rows");
      expect(report.align).toEqual(stackColumns("terminal", ctx, { wide: true }).map((c) => c.align));
    }
  });

  it("both carry every column of the definition, the cell column only with several cells", () => {
    expect(new Set(STACK_COLUMNS.map((c) => c.key)).size).toBe(STACK_COLUMNS.length);
    for (const c of STACK_COLUMNS) expect(c.shown, c.key).toEqual({ terminal: true, report: true });
    const keys = STACK_COLUMNS.map((c) => c.key);
    expect(comparisonTable(sweep).keys).toEqual(keys);
    expect(comparisonTable(plain).keys).toEqual(keys.filter((k) => k !== "cell"));
    expect(comparisonTable(sweep).head.slice(0, 3)).toEqual(["stack", "cell", "runs"]);
  });

  it("every row's cells are the same text on both surfaces", () => {
    for (const rows of [plain, sweep]) {
      const [, ...termRows] = terminalCells(renderComparison("quickstart", rows, { wide: true }));
      expect(termRows).toEqual(comparisonTable(rows).rows);
    }
    const t = comparisonTable(plain);
    const at = (stack: string, header: string): string =>
      t.rows.find((r) => r[0] === stack)![t.head.indexOf(header)]!;
    expect(at("quarter", "CPU ms/1k rows")).toBe("3.0");
    expect(at("quarter", "rows/s/vCPU")).toBe("4,000");
    expect(at("half", "rows/s/vCPU")).toBe("2,400");
    expect(at("uncapped", "rows/s/vCPU")).toBe("–");
    expect(at("quarter", "90 % CI")).toBe("baseline");
    expect(at("uncapped", "90 % CI")).toBe("n=1");
  });
});

describe("the terminal's default table is readable; --wide and --columns give the rest", () => {
  it("by default about a dozen columns, fitting 160 characters, and a line naming the ones left out", () => {
    const text = renderComparison("quickstart", plain);
    const [head] = terminalCells(text);
    expect(head).toEqual([
      "stack",
      "runs",
      "rows/s",
      "CV",
      "ratio",
      "90 % CI",
      "rows/s/vCPU",
      "core-s/M rows",
      "lag p99",
      "bottleneck",
      "flags",
      "ledger",
    ]);
    const width = Math.max(
      ...text
        .split("\n")
        .filter((l) => /^[│┌├└]/.test(l))
        .map((l) => [...l].length),
    );
    expect(width).toBeLessThanOrEqual(160);
    expect(
      Math.max(
        ...renderComparison("quickstart", plain, { wide: true })
          .split("\n")
          .map((l) => [...l].length),
      ),
    ).toBeGreaterThan(width);
    expect(text).toMatch(
      /\nnot shown: IQR, log MiB\/s, wire MiB\/s, rows\/s\/GiB, sink cores, CPU ms\/1k rows, disk MiB\/M rows, throttled, net Mbit\/s, delivery p99, verdict \(--wide for all, or --columns/,
    );
    expect(renderComparison("quickstart", plain, { wide: true })).not.toMatch(/not shown:/);
  });

  it("--columns picks columns by key or header (stack first), and names the columns when one does not exist", () => {
    const [head] = terminalCells(
      renderComparison("quickstart", plain, { columns: ["sinkCores", "rows/s", "LEDGER"] }),
    );
    expect(head).toEqual(["stack", "rows/s", "sink cores", "ledger"]);
    expect(() => renderComparison("quickstart", plain, { columns: ["speed"] })).toThrow(
      expect.objectContaining({
        code: "E_FLAG",
        message: expect.stringMatching(
          /--columns: no column "speed"; the columns are stack, cell, runs, rowsPerSecond/,
        ),
      }),
    );
  });
});

describe("the default table fits the terminal's width", () => {
  const tableWidth = (text: string) =>
    Math.max(
      ...text
        .split("\n")
        .filter((l) => /^[│┌├└]/.test(l))
        .map((l) => [...l].length),
    );

  it("COLUMNS first, then the terminal's own width, else 120 (a pipe or a file)", () => {
    expect(terminalWidth({ isTTY: true, columns: 200 }, { COLUMNS: "90" })).toBe(90);
    expect(terminalWidth({ isTTY: true, columns: 200 }, {})).toBe(200);
    expect(terminalWidth({ isTTY: false, columns: 200 }, {})).toBe(120);
    expect(terminalWidth({}, { COLUMNS: "wide" })).toBe(120);
    expect(terminalWidth({ isTTY: true, columns: 70 }, { COLUMNS: "0" })).toBe(70);
  });

  it("drops the lowest-priority columns until the table fits, keeps table order, and names what it left out", async () => {
    const full = renderComparison("quickstart", plain);
    const wanted = tableWidth(full) - 10; // too narrow for the default set by a little
    const text = renderComparison("quickstart", plain, { width: wanted });
    expect(tableWidth(text)).toBeLessThanOrEqual(wanted);
    const [head] = terminalCells(text);
    const [fullHead] = terminalCells(full);
    const dropped = fullHead!.filter((h) => !head!.includes(h));
    expect(dropped.length).toBeGreaterThan(0);
    expect(head).toEqual(fullHead!.filter((h) => head!.includes(h))); // same order
    expect(head).toEqual(expect.arrayContaining(["stack", "rows/s", "ratio", "ledger"])); // the highest priorities stay
    expect(text).toContain(
      `\nleft out to fit ${wanted} columns (COLUMNS, else the terminal's width, else 120): ${dropped.join(", ")} (set COLUMNS wider, or use --wide or --columns)`,
    );
    // the wide columns are still named as before
    expect(text).toMatch(/\nnot shown: IQR, log MiB\/s, wire MiB\/s,/);
    // the flags are never only hidden: left out of a narrow table, they are listed below it per stack
    for (const v of [2000, 2010, 1990])
      writeRunRecord(root, { stack: "whole", invocation: INV, rows: v, cores: 2 }); // 2 cores of a 2-core machine
    const withFlags = await compareStacks(root, "quickstart", ["quarter", "whole"]);
    const narrow = renderComparison("quickstart", withFlags, { width: 60 });
    expect(terminalCells(narrow)[0]).not.toContain("flags");
    const flagged = withFlags.filter((r) => r.flags.length > 0);
    expect(flagged.length).toBeGreaterThan(0);
    expect(narrow).toContain(
      `\nflags (the column left out above):\n${flagged.map((r) => `  ${r.stack}: ${r.flags.join(", ")}`).join("\n")}`,
    );
    expect(renderComparison("quickstart", withFlags, { width: 400 })).not.toContain(
      "flags (the column left out above)",
    );
    // so is the bottleneck
    expect(terminalCells(narrow)[0]).not.toContain("bottleneck");
    expect(narrow).toContain(
      `\nbottleneck (the column left out above):\n${withFlags.map((r) => `  ${r.stack}: ${r.bottlenecks.join(", ")}`).join("\n")}\nflags (the column left out above):`,
    );
    // wide enough: nothing left out, no such line
    const roomy = renderComparison("quickstart", plain, { width: tableWidth(full) });
    expect(terminalCells(roomy)[0]).toEqual(fullHead);
    expect(roomy).not.toMatch(/left out to fit/);
  });

  it("keeps stack, cell and rows/s however narrow, and leaves --wide and --columns as asked", () => {
    for (const rows of [plain, sweep]) {
      const ctx = columnContext(rows);
      const { shown } = fitColumns(rows, ctx, stackColumns("terminal", ctx), 10);
      expect(shown.map((c) => c.key)).toEqual(
        ctx.withCell ? ["stack", "cell", "rowsPerSecond"] : ["stack", "rowsPerSecond"],
      );
    }
    const wide = renderComparison("quickstart", plain, { wide: true, width: 80 });
    expect(terminalCells(wide)[0]).toEqual(
      stackColumns("terminal", columnContext(plain), { wide: true }).map((c) =>
        c.header(columnContext(plain)),
      ),
    );
    expect(wide).not.toMatch(/left out to fit/);
    expect(
      terminalCells(
        renderComparison("quickstart", plain, { columns: ["flags", "ledger", "verdict"], width: 30 }),
      )[0],
    ).toEqual(["stack", "verdict", "flags", "ledger"]);
  });
});

describe("lag p99 with the samples it rests on", () => {
  it("prints n (n≥ over runs with different counts), nothing for older results without a count", () => {
    expect(p99Cell(535.4, [30])).toBe("535 ms (n=30)");
    expect(p99Cell(535.4, [30, 30, 30])).toBe("535 ms (n=30)");
    expect(p99Cell(535.4, [31, 29, 30])).toBe("535 ms (n≥29)");
    expect(p99Cell(535.4, [undefined])).toBe("535 ms");
    expect(p99Cell(null, [30])).toBe("–");
    // the fixture's runs predate the count: the column shows the value alone
    const lag = STACK_COLUMNS.find((c) => c.key === "lagP99Ms")!;
    expect(plain[0]!.lagSamples).toEqual([undefined, undefined, undefined]);
    const ctx = columnContext(plain);
    expect(lag.cell(plain[0]!, ctx)).toBe("500 ms");
    expect(lag.cell({ ...plain[0]!, lagSamples: [20, 20, 20] }, ctx)).toBe("500 ms (n=20)");
  });

  it("delivery p99 is the median over the measured runs, n/a where the sink keeps no stored-at; the verdict column counts disagreeing runs", () => {
    const ctx = columnContext(plain);
    const delivery = STACK_COLUMNS.find((c) => c.key === "deliveryP99Ms")!;
    const verdict = STACK_COLUMNS.find((c) => c.key === "verdict")!;
    const row = plain[0]!;
    const withSummary = (i: number, extra: Record<string, unknown>) => ({
      ...row.measured[i]!,
      summary: { ...row.measured[i]!.summary!, ...extra },
    });
    const d = (p99Ms: number) => ({
      deliveryLatency: {
        rows: 10,
        p50Ms: 1,
        p99Ms,
        maxMs: p99Ms,
        resolutionMs: 1,
        unstamped: 0,
        belowZero: 0,
        clock: "one clock",
      },
    });
    const steady = { state: "steady", label: "steady", evidence: "", samples: 9 };
    const sat = {
      state: "saturated",
      label: "saturated (backpressure)",
      beganS: 3,
      evidence: "",
      samples: 9,
    };
    const measured = [
      withSummary(0, { ...d(80), saturation: steady }),
      withSummary(1, { ...d(120), saturation: steady }),
      withSummary(2, { ...d(100), saturation: sat }),
    ];
    expect(delivery.cell({ ...row, measured }, ctx)).toBe("100 ms");
    expect(verdict.cell({ ...row, measured }, ctx)).toBe("steady 2/3, saturated (backpressure) 1/3");
    const unavailable = row.measured.map((_, i) =>
      withSummary(i, { deliveryLatency: { unavailable: "Loki keeps no receive time" }, saturation: steady }),
    );
    expect(delivery.cell({ ...row, measured: unavailable }, ctx)).toBe("n/a");
    expect(verdict.cell({ ...row, measured: unavailable }, ctx)).toBe("steady");
    // runs that predate both: no value
    expect(delivery.cell(row, ctx)).toBe("–");
    expect(verdict.cell(row, ctx)).toBe("–");
  });
});

describe("the storage column (run.json storage)", () => {
  it("prints the median MiB on disk per million rows, and – where no run of the stack says", () => {
    const col = STACK_COLUMNS.find((c) => c.key === "storageBytesPerMillionRows")!;
    const ctx = { withCell: false, confidence: 0.9 };
    expect(col.wide).toBe(true);
    expect(col.cell({ storageBytesPerMillionRows: 153_662_608 } as StackRow, ctx)).toBe("146.5");
    expect(col.cell({ storageBytesPerMillionRows: null } as StackRow, ctx)).toBe("–");
  });
});

describe("the cost column (Summary.cost)", () => {
  const price = { source: "infra/azure/prices.yaml", date: "2026-11-30" };
  const cost = (usd: number | undefined, coreSeconds: number) => ({
    coreSecondsPerMillionRows: coreSeconds,
    hostsCoreSeconds: { loadgen: 1, sink: 2 },
    ...(usd === undefined ? {} : { usdPerMillionRows: usd, usdPerHour: 0.4, prices: price }),
  });

  it("$ per million rows when every compared run has a price, the stack's core-seconds per million rows when one has none", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ingestbench-cost-"));
    try {
      for (const [i, v] of [1000, 1010, 990].entries())
        writeRunRecord(dir, {
          stack: "a",
          invocation: INV,
          rows: v,
          cost: cost([0.011, 0.012, 0.013][i], 150 + i),
        });
      writeRunRecord(dir, { stack: "b", invocation: INV, rows: 2000, cost: cost(0.02, 90) });
      writeRunRecord(dir, {
        stack: "c",
        invocation: INV,
        rows: 2000,
        cost: { ...cost(undefined, 12_345.6), noPrice: "sink: no pricePerHour in the stack file" },
      });
      const priced = await compareStacks(dir, "quickstart", ["a", "b"]);
      const t = comparisonTable(priced);
      const at = (tt: typeof t, stack: string, header: string) =>
        tt.rows.find((r) => r[0] === stack)![tt.head.indexOf(header)];
      expect(at(t, "a", "$/M rows")).toBe("$0.0120"); // the median of the three runs
      expect(at(t, "b", "$/M rows")).toBe("$0.0200");
      const mixed = comparisonTable(await compareStacks(dir, "quickstart", ["a", "c"]));
      expect(mixed.head).not.toContain("$/M rows");
      expect(at(mixed, "a", "core-s/M rows")).toBe("151");
      expect(at(mixed, "c", "core-s/M rows")).toBe("12,346");
      // and says why, below the table: the stack without dollars and its hosts without a price
      const text = renderComparison("quickstart", await compareStacks(dir, "quickstart", ["a", "c"]));
      expect(text).toContain(
        "cost in core-s/M rows: not every stack has a price for every host\n  c: sink: no pricePerHour in the stack file",
      );
      expect(renderComparison("quickstart", priced)).not.toContain("cost in core-s/M rows");
      // in compare's default table, not only with --wide
      const [head] = terminalCells(renderComparison("quickstart", priced));
      expect(head).toContain("$/M rows");
      expect(STACK_COLUMNS.find((c) => c.key === "costPerMillionRows")!.wide).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
