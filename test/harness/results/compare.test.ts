import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import {
  compareCommand,
  compareRuns,
  compareStacks,
  loadNoiseFloors,
  stackComparisonJson,
  noiseFloorPath,
  renderComparison,
  renderRunsComparison,
  sinkCaps,
  writeNoiseFloors,
  type NoiseFloorCell,
} from "../../../harness/results/compare.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { statusProblem } from "../../../harness/results/eligibility.ts";
import { stackDifferences } from "../../../harness/results/fingerprint.ts";
import { type Spec, writeRunRecord } from "../../helpers/run-records.ts";

let root = "";
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "ingestbench-compare-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const writeRun = (s: Spec): RunRecord => writeRunRecord(root, s);

const tight = [1000, 1010, 990, 1005, 995];
const INV_OLD = "2026-11-28T10:00:00.000Z";
const INV = "2026-11-29T10:00:00.000Z";
const INV2 = "2026-11-30T10:00:00.000Z";

describe("compareStacks", () => {
  beforeAll(() => {
    // an older invocation on the baseline stack that must be ignored (latest invocation only)
    for (const v of [5000, 5100, 4900]) writeRun({ stack: "quarter", invocation: INV_OLD, rows: v });
    for (const v of tight) writeRun({ stack: "quarter", invocation: INV, rows: v });
    for (const v of tight)
      writeRun({ stack: "two-cores", invocation: INV, rows: v * 1.2, cores: 2, memoryGiB: 4 });
    for (const v of tight)
      writeRun({ stack: "same", invocation: INV, rows: v * 1.02, cores: 0.25, memoryGiB: 2 });
    for (const v of [1000, 1600, 700, 1300, 900])
      writeRun({ stack: "noisy", invocation: INV, rows: v, cores: null, memoryGiB: null });
    writeRun({ stack: "single", invocation: INV, rows: 3000, cores: 1, memoryGiB: 1 });
    for (const v of tight) writeRun({ stack: "other-pg", invocation: INV, rows: v, postgres: "17.2" });
  });

  it("takes a stack's latest complete invocation: a newer one interrupted after a few seconds does not replace it", async () => {
    for (const v of tight) writeRun({ stack: "cut-short", invocation: INV_OLD, rows: v });
    writeRun({ stack: "cut-short", invocation: INV, rows: 99_999, status: "interrupted" });
    // and one more, newer still, of a cell the complete invocation did not run
    const stray = writeRun({
      stack: "cut-short",
      invocation: INV2,
      rows: 5,
      status: "interrupted",
      cell: "batch=1",
    });
    const rows = await compareStacks(root, "quickstart", ["quarter", "cut-short"]);
    expect(rows[1]!.runs.map((r) => [r.invocation, r.status])).toEqual(tight.map(() => [INV_OLD, "ok"]));
    expect(rows[1]!.medianRowsPerSecond).toBe(1000);
    // passed over, and listed as excluded with the reason (not silently skipped), the stray cell's run too
    expect(rows[1]!.excluded.map((x) => [x.invocation, x.cell, x.kind])).toEqual([
      [INV, "default", "status"],
      [INV2, "batch=1", "status"],
    ]);
    expect(rows[1]!.excluded[0]!.reason).toBe(
      "interrupted (its measurement is partial); passed over: its invocation has no complete run here (of this scenario on this stack), so 2026-11-28T10:00:00.000Z, the latest that has, is compared",
    );
    const text = renderComparison("quickstart", rows);
    expect(text).toContain("excluded runs (2, not used in any figure above)");
    expect(text).toContain(`${stray.runId} (cut-short, batch=1, ${INV2}): interrupted`);
    expect(
      (stackComparisonJson("quickstart", rows) as { excluded: Array<{ runId: string }> }).excluded.map(
        (x) => x.runId,
      ),
    ).toContain(stray.runId);
    // with nothing complete, the interrupted measurement is what there is (and it is labelled so)
    writeRun({ stack: "only-cut", invocation: INV, rows: 800, status: "interrupted" });
    const only = await compareStacks(root, "quickstart", ["quarter", "only-cut"]);
    expect(only[1]!.runs.map((r) => r.status)).toEqual(["interrupted"]);
  });

  it("gives ratios with bootstrap intervals, spread, per-vCPU and per-GiB figures", async () => {
    const rows = await compareStacks(root, "quickstart", ["quarter", "two-cores", "same", "noisy", "single"]);
    const by = Object.fromEntries(rows.map((r) => [r.stack, r]));
    expect(rows.map((r) => r.stack)).toEqual(["quarter", "two-cores", "same", "noisy", "single"]);
    expect(by.quarter!.runs).toHaveLength(5);
    expect(by.quarter!.medianRowsPerSecond).toBe(1000);
    expect(by.quarter!.comparison).toBeNull();
    expect(by.quarter!.rowsPerSecond.iqr).toBe(10);
    expect(by.quarter!.caps).toEqual({ cores: 0.25, memoryBytes: 2 * 2 ** 30 });
    expect(by.quarter!.rowsPerSecondPerCore).toBeCloseTo(4000, 6);
    expect(by.quarter!.rowsPerSecondPerGiB).toBeCloseTo(500, 6);

    expect(by["two-cores"]!.ratio).toBeCloseTo(1.2, 10);
    const c = by["two-cores"]!.comparison!;
    expect(c.significant).toBe(true);
    expect(c.change).toBe("faster");
    expect(c.ci![0]).toBeGreaterThan(1.1);
    expect(c.ci![1]).toBeLessThan(1.3);
    // the fixtures' machine has 2 cores: a 2-core cap there is no cap ("uncapped (≥ machine)"), so nothing divides by it
    expect(by["two-cores"]!.caps.cores).toBeNull();
    expect(by["two-cores"]!.rowsPerSecondPerCore).toBeNull();
    expect(by["two-cores"]!.flags).toContain("uncapped (≥ machine)");
    expect(by["two-cores"]!.rowsPerSecondPerGiB).toBeCloseTo(300, 6);

    expect(by.same!.comparison!.significant).toBe(false);
    expect(by.same!.comparison!.change).toBe("none");

    expect(by.noisy!.rowsPerSecond.erratic).toBe(true);
    expect(by.noisy!.caps).toEqual({ cores: null, memoryBytes: null });
    expect(by.noisy!.rowsPerSecondPerCore).toBeNull();

    expect(by.single!.comparison!.ci).toBeNull();
    expect(by.single!.comparison!.significant).toBe(false);

    const text = renderComparison("quickstart", rows, { wide: true }); // every column (the default table leaves some out)
    const line = (stack: string): string => text.split("\n").find((l) => l.startsWith(`│ ${stack} `))!;
    expect(text).toContain("90 % CI");
    expect(line("quarter")).toMatch(/│ 1\.00x │ baseline\s+│\s+4,000 │\s+500 │/);
    // rows/s/vCPU "–": the 2-core cap is no cap on the fixtures' 2-core machine
    expect(line("two-cores")).toMatch(/│ 1\.20x │ \[\d\.\d\d, \d\.\d\d\] faster\s+│\s+– │\s+300 │/);
    expect(line("same")).toMatch(/│ 1\.02x │ \[[\d.]+, [\d.]+\] ~/);
    expect(line("noisy")).toMatch(/% erratic/);
    expect(line("noisy")).toMatch(/│\s+– │\s+– │/); // uncapped: no per-vCPU, no per-GiB figure
    expect(line("single")).toMatch(/│ 3\.00x │ n=1\s+│\s+3,000 │\s+3,000 │/);
    expect(text).toMatch(/two-cores: 1\.20x faster \(90 % interval/);
    expect(text).not.toContain("environment differences");
  });

  it("refuses stacks with different component versions unless forced, and lists the difference", async () => {
    const err = await compareStacks(root, "quickstart", ["quarter", "other-pg"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as ConfigurationError).code).toBe("E_VERSION_MISMATCH");
    expect((err as Error).message).toContain("versions.postgres.running: quarter 18.4; other-pg 17.2");
    const rows = await compareStacks(root, "quickstart", ["quarter", "other-pg"], { force: true });
    expect(rows[1]!.ratio).toBe(1);
    const text = renderComparison("quickstart", rows);
    expect(text).toContain("!! versions.postgres.running: quarter 18.4; other-pg 17.2");
  });

  it("keeps a readable error for a stack without results", async () => {
    // a stack with no results at all: named as such, with the stacks that have some (a misspelt name, usually)
    await expect(compareStacks(root, "quickstart", ["quarter", "nothing"])).rejects.toMatchObject({
      code: "E_NO_RESULTS",
      message: expect.stringMatching(
        /^no results of stack "nothing" under .*\(stacks with results: .*\bquarter\b.*\); no stacks\/Pulumi\.nothing\.yaml here either \(`node bin\/ingestbench\.js stacks` lists the stacks\)$/,
      ),
    });
    // a stack file of that name exists: the bench command that makes its results is suggested
    await expect(compareStacks(root, "quickstart", ["quarter", "local-quarter-core"])).rejects.toMatchObject({
      message: expect.stringMatching(
        /; stacks\/Pulumi\.local-quarter-core\.yaml exists: it has not been benchmarked yet; run: node bin\/ingestbench\.js bench --stack local-quarter-core scenarios\/quickstart\.yaml$/,
      ),
    });
    // a near name is suggested; no bench command is, since no such stack file exists
    await expect(compareStacks(root, "quickstart", ["quarter", "quartre"])).rejects.toMatchObject({
      message: expect.stringMatching(/; did you mean "quarter"\?; no stacks\/Pulumi\.quartre\.yaml/),
    });
    // a stack with results, of other scenarios: those are listed
    await expect(compareStacks(root, "quickstrat", ["quarter"])).rejects.toMatchObject({
      code: "E_NO_RESULTS",
      message: expect.stringMatching(
        /^no results for scenario "quickstrat" on stack "quarter" .*\(its scenarios with results: quickstart\); did you mean "quickstart"\?$/,
      ),
    });
  });
});

describe("compareRuns", () => {
  beforeAll(() => {
    for (const v of tight) {
      writeRun({ stack: "nightly", invocation: INV, rows: v, cell: "batch=1000" });
      writeRun({ stack: "nightly", invocation: INV, rows: v * 5, cell: "batch=8000" });
      // next night: the CPU cap lowered; batch=8000 regressed, batch=1000 the same
      writeRun({ stack: "nightly", invocation: INV2, rows: v, cell: "batch=1000", cores: 0.2 });
      writeRun({ stack: "nightly", invocation: INV2, rows: v * 4, cell: "batch=8000", cores: 0.2 });
    }
    writeRun({
      stack: "nightly",
      invocation: INV2,
      rows: 0,
      cell: "batch=8000",
      status: "error",
      cores: 0.2,
    });
    writeRun({
      stack: "nightly",
      invocation: "2026-12-01T10:00:00.000Z",
      rows: 5000,
      cell: "batch=8000",
      postgres: "18.5",
    });
  });

  it("compares per cell, names regressions and lists limit differences", async () => {
    const r = await compareRuns(root, "quickstart", "nightly", {
      baseline: "2026-11-29",
      contenders: ["2026-11-30"],
    });
    expect(r.baseline.runIds).toHaveLength(10);
    expect(r.contenders[0]!.runIds).toHaveLength(11);
    expect(r.contenders[0]!.statuses).toEqual({ ok: 10, error: 1 });
    expect(r.cells.map((c) => c.cell)).toEqual(["batch=1000", "batch=8000"]);
    const [small, big] = r.cells;
    expect(small!.contenders[0]!.comparison!.change).toBe("none");
    expect(big!.contenders[0]!.comparison!.ratio).toBeCloseTo(0.8, 10);
    expect(big!.contenders[0]!.comparison!.change).toBe("slower");
    expect(big!.contenders[0]!.runs).toBe(6);
    expect(big!.contenders[0]!.measured).toBe(5);
    expect(big!.baseline.rowsPerSecondPerCore).toBeCloseTo(20000, 6);
    expect(big!.contenders[0]!.rowsPerSecondPerCore).toBeCloseTo(20000, 6);
    expect(r.significant).toEqual({ faster: 0, slower: 1 });
    expect(r.forced).toBe(false);
    const quota = r.differences.find((d) => d.field === "limits.sink.cfsQuotaUs");
    expect(quota).toMatchObject({ kind: "limits", values: { "2026-11-29": "25000", "2026-11-30": "20000" } });
    expect(r.differences.some((d) => /Interface/.test(d.field))).toBe(false);

    const text = renderRunsComparison(r);
    expect(text).toMatch(
      /batch=8000 │ 2026-11-30\s+│\s+5\/6 │\s+4,000 │.*│ 0\.80x │ \[0\.\d\d, 0\.\d\d\] slower/,
    );
    expect(text).toContain("significant changes: 1 slower, 0 faster");
    expect(text).toContain("limits.sink.cfsQuotaUs: 2026-11-29 25000; 2026-11-30 20000");
  });

  it("selects by run id prefix and by latest/previous, and rejects unknown or overlapping selections", async () => {
    const r = await compareRuns(root, "quickstart", "nightly", {
      baseline: "20261129T100000Z",
      contenders: ["20261130"],
    });
    expect(r.baseline.invocations).toEqual([INV]);
    await expect(compareRuns(root, "quickstart", "nightly", { baseline: "1999" })).rejects.toMatchObject({
      code: "E_NO_RUNS",
    });
    await expect(
      compareRuns(root, "quickstart", "nightly", { baseline: "2026-11", contenders: ["2026-11-30"] }),
    ).rejects.toMatchObject({ code: "E_SELECTOR_OVERLAP" });
    // latest is 2026-12-01 (another PostgreSQL): refused, then forced
    const err = await compareRuns(root, "quickstart", "nightly", { baseline: "previous" }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as ConfigurationError).code).toBe("E_VERSION_MISMATCH");
    expect((err as Error).message).toContain("versions.postgres.running: previous 18.4; latest 18.5");
    const forced = await compareRuns(
      root,
      "quickstart",
      "nightly",
      { baseline: "previous", contenders: ["latest"] },
      { force: true },
    );
    expect(forced.forced).toBe(true);
    expect(forced.cells.map((c) => c.cell)).toEqual(["batch=1000", "batch=8000"]);
    expect(forced.cells[0]!.contenders[0]!.comparison).toBeNull();
    expect(forced.cells[0]!.contenders[0]!.reason).toMatch(/no measured run of cell batch=1000 in "latest"/);
    expect(forced.cells[1]!.contenders[0]!.comparison!.ci).toBeNull(); // n=1
    expect(renderRunsComparison(forced)).toContain(
      "!! versions.postgres.running: previous 18.4; latest 18.5",
    );
  });

  it("latest and previous are complete invocations: a newer interrupted one is passed over and listed as excluded", async () => {
    for (const v of tight) {
      writeRun({ stack: "cut-latest", invocation: INV, rows: v });
      writeRun({ stack: "cut-latest", invocation: INV2, rows: v * 1.1 });
    }
    const cut = writeRun({
      stack: "cut-latest",
      invocation: "2026-12-01T10:00:00.000Z",
      rows: 10,
      status: "interrupted",
    });
    const r = await compareRuns(root, "quickstart", "cut-latest", {
      baseline: "previous",
      contenders: ["latest"],
    });
    expect(r.baseline.invocations).toEqual([INV]);
    expect(r.contenders[0]!.invocations).toEqual([INV2]);
    expect(r.cells[0]!.contenders[0]!.comparison!.ratio).toBeCloseTo(1.1, 10);
    expect(r.excluded.map((x) => x.runId)).toEqual([cut.runId]);
    expect(renderRunsComparison(r)).toMatch(
      /excluded runs \(1, not used in any figure above\):\n.*interrupted \(its measurement is partial\); passed over: its invocation has no complete run here/,
    );
    // one complete invocation only: "previous" says why it matches nothing
    writeRun({ stack: "one-night", invocation: INV, rows: 1000 });
    await expect(
      compareRuns(root, "quickstart", "one-night", { baseline: "previous" }),
    ).rejects.toMatchObject({
      code: "E_NO_RUNS",
      message: expect.stringMatching(
        /^"previous" of "quickstart" on "one-night": latest and previous count complete invocations only .*there is 1 \(2026-11-29T10:00:00\.000Z\)/,
      ),
    });
    // a run interrupted before it measured says so (its own terminal line says "nothing measured")
    expect(statusProblem({ ...cut, summary: null })).toBe(
      "interrupted before its measurement began (nothing measured)",
    );
    // named by prefix, the interrupted invocation is what is asked for: its run is excluded by its status
    const named = await compareRuns(root, "quickstart", "cut-latest", {
      baseline: INV2,
      contenders: ["2026-12-01"],
    });
    expect(named.contenders[0]!.runIds).toEqual([cut.runId]);
    expect(named.excluded.map((x) => [x.runId, x.reason])).toEqual([
      [cut.runId, "interrupted (its measurement is partial)"],
    ]);
  });
});

describe("honesty rules: minimum sample size and the A/A noise floor", () => {
  const floorCell = (cell: string, floor: number): NoiseFloorCell => ({
    cell,
    floor,
    ratio: 1 - floor,
    ci: [1 - 2 * floor, 1],
    halfWidth: floor,
    n: { a: 3, b: 3 },
    inconclusive: false,
    reason: "synthetic",
  });

  it("two runs a side are 'inconclusive (n=2/2)', not a change, even when their ranges do not overlap", async () => {
    for (const v of [100_000, 101_000]) writeRun({ stack: "two-reps", invocation: INV, rows: v });
    for (const v of [93_000, 94_000]) writeRun({ stack: "two-reps", invocation: INV2, rows: v });
    const c = await compareRuns(root, "quickstart", "two-reps", { baseline: INV, contenders: [INV2] });
    const k = c.cells[0]!.contenders[0]!;
    expect(k.comparison!.ci![1]).toBeLessThan(1);
    expect(k.comparison).toMatchObject({ inconclusive: true, significant: false, change: "none" });
    expect(c.significant).toEqual({ faster: 0, slower: 0 });
    expect(c.inconclusive).toBe(1);
    const text = renderRunsComparison(c);
    expect(text).toMatch(/inconclusive \(n=2\/2\)/);
    expect(text).toMatch(/1 inconclusive \(fewer than 3 measured runs on a side\)/);
  });

  it("a stored A/A noise floor raises the bar per cell, across runs and across stacks; noiseFloors: false ignores it", async () => {
    // 8 % slower with tight replicates: a change by the interval and the 5 % rule
    for (const v of tight) {
      writeRun({ stack: "aa-stack", invocation: INV, rows: v, cell: "batch=1000" });
      writeRun({ stack: "aa-stack", invocation: INV, rows: v, cell: "batch=8000" });
      writeRun({ stack: "aa-stack", invocation: INV2, rows: v * 0.92, cell: "batch=1000" });
      writeRun({ stack: "aa-stack", invocation: INV2, rows: v * 0.92, cell: "batch=8000" });
    }
    const before = await compareRuns(root, "quickstart", "aa-stack", { baseline: INV, contenders: [INV2] });
    expect(before.significant.slower).toBe(2);
    expect(before.noiseFloors).toEqual({});
    // the A/A says batch=1000 varies by ±10 % between identical runs, batch=8000 by ±2 %
    await writeNoiseFloors(root, {
      stack: "aa-stack",
      scenario: "quickstart",
      invocation: `${INV}/A`,
      createdAt: INV,
      confidence: 0.9,
      cells: [floorCell("batch=1000", 0.1), floorCell("batch=8000", 0.02)],
    });
    expect(noiseFloorPath(root, "aa-stack", "quickstart")).toBe(
      path.join(root, "aa-stack", "quickstart.aa", "noise-floor.json"),
    );
    expect(loadNoiseFloors(root, "aa-stack", "quickstart")!.cells).toHaveLength(2);
    const after = await compareRuns(root, "quickstart", "aa-stack", { baseline: INV, contenders: [INV2] });
    const [c1000, c8000] = after.cells;
    expect(c1000!.contenders[0]!.comparison).toMatchObject({ significant: false, noiseFloor: 0.1 });
    expect(c1000!.contenders[0]!.reason).toMatch(/within the A\/A noise floor 10\.0 %/);
    expect(c8000!.contenders[0]!.comparison).toMatchObject({
      significant: true,
      change: "slower",
      noiseFloor: 0.02,
    });
    expect(after.significant.slower).toBe(1);
    expect(renderRunsComparison(after)).toMatch(
      /A\/A noise floors applied .*batch=1000 ±10\.0 %, batch=8000 ±2\.0 %/,
    );
    const ignored = await compareRuns(
      root,
      "quickstart",
      "aa-stack",
      { baseline: INV, contenders: [INV2] },
      { noiseFloors: false },
    );
    expect(ignored.significant.slower).toBe(2);
    // across stacks the larger of the two stacks' floors applies
    for (const v of tight) {
      writeRun({ stack: "aa-other", invocation: INV, rows: v * 0.92, cell: "batch=1000" });
      writeRun({ stack: "aa-other", invocation: INV, rows: v * 0.92, cell: "batch=8000" });
    }
    const rows = await compareStacks(root, "quickstart", ["aa-stack", "aa-other"]);
    // the floor applied is the larger of the two stacks' per cell (aa-other has no A/A result: aa-stack's)
    expect(rows.filter((r) => r.stack === "aa-other").map((r) => r.comparison!.noiseFloor)).toEqual([
      0.1, 0.02,
    ]);
  });

  it("refuses a noise-floor file that is not one, naming it", async () => {
    const file = noiseFloorPath(root, "broken-aa", "quickstart");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, "{ not json");
    expect(() => loadNoiseFloors(root, "broken-aa", "quickstart")).toThrow(
      /noise-floor\.json: not a noise-floor file/,
    );
    expect(loadNoiseFloors(root, "nowhere", "quickstart")).toBeNull();
  });
});

describe("sinkCaps and compareCommand", () => {
  it("reads cores and memory from the applied limits, '–' (null) when uncapped", () => {
    const r = writeRun({ stack: "caps", invocation: INV, rows: 1, cores: 0.5, memoryGiB: null });
    expect(sinkCaps(r)).toEqual({ cores: 0.5, memoryBytes: null });
    // cgroup v1 read-back of "no limit": quota -1, memory near 2^63
    const unlimited = {
      ...r,
      limits: {
        sink: {
          requested: {},
          applied: { cfsQuotaUs: -1, cfsPeriodUs: 100000, memoryLimitBytes: 9223372036854771712 },
          enforced: true,
          notes: [],
        },
      },
    };
    expect(sinkCaps(unlimited)).toEqual({ cores: null, memoryBytes: null });
    // enforced, but nothing read back (a platform that records only what it applied by other means): the requested caps
    const requestedOnly = {
      ...r,
      limits: {
        sink: { requested: { cpu: "1.5", memory: "512MiB" }, applied: {}, enforced: true, notes: [] },
      },
    };
    expect(sinkCaps(requestedOnly)).toEqual({ cores: 1.5, memoryBytes: 512 * 2 ** 20 });
    // not enforced (no root): what was asked was not applied, so no caps
    expect(
      sinkCaps({ ...requestedOnly, limits: { sink: { ...requestedOnly.limits.sink, enforced: false } } }),
    ).toEqual({ cores: null, memoryBytes: null });
    // a cap at or above the run's machine is not a cap: 2 cores on a 2-core machine, 24 GiB on a 24 GiB one
    const two = writeRun({ stack: "caps-at-machine", invocation: INV, rows: 1, cores: 2, memoryGiB: 4 });
    expect(sinkCaps(two)).toEqual({ cores: null, memoryBytes: 4 * 2 ** 30 });
    expect(sinkCaps({ ...two, environment: { ...two.environment, cores: 4 } })).toEqual({
      cores: 2,
      memoryBytes: 4 * 2 ** 30,
    });
    expect(sinkCaps({ ...two, environment: { ...two.environment, memoryBytes: 4 * 2 ** 30 } })).toEqual({
      cores: null,
      memoryBytes: null,
    });
    // "partial" (v1 buffered writes) still counts the caps that were written and read back
    expect(
      sinkCaps({
        ...requestedOnly,
        limits: { sink: { ...requestedOnly.limits.sink, enforced: "partial" as const } },
      }),
    ).toEqual({ cores: 1.5, memoryBytes: 512 * 2 ** 20 });
  });

  it("a stack whose runs have no ledger (errored before the verifier ran): lost null in --json and 'no ledger' in the table, never lost 0", async () => {
    const errored = writeRun({ stack: "no-ledger", invocation: INV, rows: 0, status: "error" });
    const json = JSON.parse(
      await compareCommand(root, { scenario: "quickstart", stacks: "quarter,no-ledger", json: true }),
    ) as {
      rows: Array<{
        stack: string;
        lost: number | null;
        duplicated: number | null;
        ledgers: number;
        withoutLedger: string[];
      }>;
    };
    const row = json.rows.find((r) => r.stack === "no-ledger")!;
    expect(row).toMatchObject({ lost: null, duplicated: null, ledgers: 0, withoutLedger: [errored.runId] });
    expect(json.rows.find((r) => r.stack === "quarter")).toMatchObject({
      lost: 0,
      ledgers: 5,
      withoutLedger: [],
    });
    const table = await compareCommand(root, { scenario: "quickstart", stacks: "quarter,no-ledger" });
    expect(table).toMatch(/no ledger \(1 run\)/);
  });

  it("prints JSON and checks flag combinations", async () => {
    const json = JSON.parse(
      await compareCommand(root, { scenario: "quickstart", stacks: "quarter,two-cores", json: true }),
    ) as {
      mode: string;
      rows: Array<{
        stack: string;
        ratio: number;
        comparison: { ci: number[] } | null;
        runIds: string[];
        runs?: unknown;
      }>;
    };
    expect(json.mode).toBe("stacks");
    expect(json.rows[1]!.ratio).toBeCloseTo(1.2, 10);
    expect(json.rows[1]!.comparison!.ci).toHaveLength(2);
    expect(json.rows[0]!.runIds).toHaveLength(5);
    expect(json.rows[0]!.runs).toBeUndefined();
    const runs = JSON.parse(
      await compareCommand(root, {
        scenario: "quickstart",
        stacks: "nightly",
        baseline: "2026-11-29",
        contender: ["2026-11-30"],
        json: true,
      }),
    ) as { mode: string; significant: { slower: number } };
    expect(runs).toMatchObject({ mode: "runs", significant: { slower: 1 } });
    await expect(
      compareCommand(root, { scenario: "quickstart", stacks: "a,b", baseline: "x" }),
    ).rejects.toMatchObject({ code: "E_FLAG" });
    await expect(
      compareCommand(root, { scenario: "quickstart", stacks: "a", contender: ["x"] }),
    ).rejects.toMatchObject({ code: "E_FLAG" });
  });
});

describe("compareStacks on one stack with a swept parameter", () => {
  it("gives each cell's ratio to the first cell with its interval: how the parameter moves throughput", async () => {
    for (const v of tight) writeRun({ stack: "sweep", invocation: INV, rows: v, cell: "batch-lines=100" });
    for (const v of tight)
      writeRun({ stack: "sweep", invocation: INV, rows: v * 10, cell: "batch-lines=10000" });
    for (const v of tight)
      writeRun({ stack: "sweep", invocation: INV, rows: v * 1.01, cell: "batch-lines=1000" });
    const rows = await compareStacks(root, "quickstart", ["sweep"]);
    expect(rows.map((r) => [r.cell, r.baselineCell])).toEqual([
      ["batch-lines=100", "batch-lines=100"],
      ["batch-lines=1000", "batch-lines=100"],
      ["batch-lines=10000", "batch-lines=100"],
    ]);
    expect(rows.map((r) => Number(r.ratio.toFixed(2)))).toEqual([1, 1.01, 10]);
    expect(rows[0]!.comparison).toBeNull();
    expect(rows[1]!.comparison!.change).toBe("none"); // 1 % is below the 5 % rule
    expect(rows[2]!.comparison!.change).toBe("faster");
    const text = renderComparison("quickstart", rows);
    expect(text).toContain("ratio to the first cell, batch-lines=100");
    expect(text).toMatch(/batch-lines=10000 *│ *5\/5 .*10\.00x │ \[\d+\.\d\d, \d+\.\d\d\] faster/);
  });
});

describe("compareRuns lists runs that differ in timing", () => {
  it("names a 3 s contender beside 30 s baseline runs as a workload difference, without refusing", async () => {
    for (const v of tight) writeRun({ stack: "timing", invocation: INV, rows: v, durationMs: 30_000 });
    for (const v of tight) writeRun({ stack: "timing", invocation: INV2, rows: v, durationMs: 3_000 });
    const r = await compareRuns(root, "quickstart", "timing", { baseline: INV, contenders: [INV2] });
    expect(r.differences.find((d) => d.field === "workload.durationMs")).toMatchObject({
      kind: "workload",
      values: { [INV]: "30000", [INV2]: "3000" },
    });
    expect(r.differences.some((d) => d.field === "workload.warmupMs")).toBe(false); // the same on both sides
    expect(renderRunsComparison(r)).toContain("workload.durationMs");
  });
});

describe("a replay of a log file beside seeded text", () => {
  it("is listed as a workload difference (workload.source) between the stacks, naming the file", async () => {
    for (const v of tight) writeRun({ stack: "seeded", invocation: INV, rows: v, scenario: "replayed" });
    for (const v of tight)
      writeRun({
        stack: "replay",
        invocation: INV,
        rows: v * 2,
        scenario: "replayed",
        sourceFile: "/work/shared/logs/Apache_2k.log",
      });
    const rows = await compareStacks(root, "replayed", ["seeded", "replay"]);
    expect(stackDifferences(rows).find((d) => d.field === "workload.source")).toMatchObject({
      kind: "workload",
      values: { seeded: "seeded text", replay: "file Apache_2k.log" },
    });
  });
});
