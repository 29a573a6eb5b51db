// Write-up 003's table from run records (harness/results/across-variants.ts variantsTable): the latest invocation's
// app runs grouped by variant in the scenario's order, medians per figure, records from the ledger, and each variant
// after the first compared with it (ratio of medians with a bootstrap interval); runs that are not ok are left out.
import { describe, expect, it } from "vitest";
import { variantsTable, variantsTextTable } from "../../../harness/results/across-variants.ts";
import type { RunRecord } from "../../../harness/results/types.ts";

const variants = [{ name: "disabled" }, { name: "enabled" }];
let n = 0;
function run(
  variant: string,
  tps: number,
  o: { invocation?: string; status?: string; stored?: number; dropped?: number } = {},
): RunRecord {
  n++;
  return {
    runId: `r${n}`,
    invocation: o.invocation ?? "inv-2",
    status: o.status ?? "ok",
    cell: `variant=${variant}`,
    stack: "local-pipeline",
    scenarioConfig: { variants },
    summary: {},
    limits: {},
    environment: { cpuModel: "AMD EPYC", kernel: "6.18", cores: 2, cgroup: "v1" },
    checks: [],
    error: null,
    ledger: { distinct: o.stored ?? 0, lost: o.dropped ?? 0 },
    app: {
      variant,
      host: "loadgen",
      argv: [],
      exitCode: 0,
      raw: {},
      stderrTail: [],
      figures: {
        throughput: tps,
        latencyMeanMs: 1000 / tps,
        latencyP50Ms: 1,
        latencyP99Ms: 2,
        sent: (o.stored ?? 0) + (o.dropped ?? 0),
        sentBytes: (o.stored ?? 0) * 300,
        dropped: o.dropped ?? 0,
        elapsedMs: 2000,
      },
      cpuCores: { loadgen: tps / 1000, sink: 0.1 },
      ledger: { agrees: true },
    },
  } as unknown as RunRecord;
}

describe("variantsTable", () => {
  it("groups the latest invocation's runs by variant, the first variant the baseline of every ratio", () => {
    const runs = [
      run("enabled", 1, { invocation: "inv-1" }), // an older invocation: not in the table
      run("enabled", 900, { stored: 900 }),
      run("disabled", 1000),
      run("enabled", 950, { stored: 950 }),
      run("disabled", 1010),
      run("enabled", 920, { stored: 920, dropped: 3 }),
      run("disabled", 990),
      run("disabled", 5, { status: "error" }),
    ];
    const t = variantsTable(runs, "app-export-ab", "local-pipeline");
    expect(t.invocation).toBe("inv-2");
    expect(t.baseline).toBe("disabled");
    expect(t.rows.map((r) => [r.variant, r.baseline, r.runs])).toEqual([
      ["disabled", true, 3],
      ["enabled", false, 3],
    ]);
    expect(t.excluded.map((x) => x.runId)).toEqual(["r8"]);
    const [base, enabled] = t.rows;
    expect(base!.figures.throughput.values.median).toBe(1000);
    expect(base!.figures.throughput.vsBaseline).toBeNull();
    expect(enabled!.figures.throughput.values.median).toBe(920);
    expect(enabled!.figures.throughput.vsBaseline!.ratio).toBeCloseTo(0.92, 10);
    expect(enabled!.figures.throughput.vsBaseline!.ci).not.toBeNull();
    expect(enabled!.figures.records.values.median).toBe(920);
    expect(enabled!.figures.dropped.values.max).toBe(3);
    expect(enabled!.cpu.loadgen!.values.median).toBeCloseTo(0.92, 10);
    expect(enabled!.ledgerAgrees).toBe(true);
    const text = variantsTextTable(t);
    expect(text.head).toEqual([
      "variant",
      "runs",
      "throughput tx/s",
      "mean ms",
      "p50 / p99 ms",
      "CPU loadgen",
      "CPU sink",
      "records",
      "bytes",
      "dropped",
      "elapsed s",
      "ledger",
    ]);
    expect(text.rows.map((r) => r[0])).toEqual(["disabled (baseline)", "enabled", "  vs disabled"]);
    expect(text.rows[2]![2]).toMatch(/^0\.92x \[/);
  });

  it("picks an invocation by prefix, and has no invocation without app runs", () => {
    const runs = [
      run("disabled", 10, { invocation: "2026-01-01T00" }),
      run("enabled", 10, { invocation: "2026-02-01T00" }),
    ];
    expect(variantsTable(runs, "s", "st", "2026-01").invocation).toBe("2026-01-01T00");
    expect(variantsTable([], "s", "st").invocation).toBeNull();
  });

  it("by default passes over a newer invocation that completed no measurement, and lists its runs as excluded", () => {
    const runs = [
      run("disabled", 1000, { invocation: "inv-2" }),
      run("enabled", 900, { invocation: "inv-2", stored: 900 }),
      run("disabled", 7, { invocation: "inv-3", status: "interrupted" }),
    ];
    const t = variantsTable(runs, "s", "st");
    expect(t.invocation).toBe("inv-2");
    expect(t.excluded.map((x) => [x.runId, x.invocation])).toEqual([[runs[2]!.runId, "inv-3"]]);
    expect(t.excluded[0]!.reason).toMatch(
      /^interrupted .*passed over: .*so inv-2, the latest that has, is compared$/,
    );
  });
});
