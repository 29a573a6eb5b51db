import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { loadNightlyPlan } from "../../../harness/nightly/plan.ts";
import { decideNightly } from "../../../harness/nightly/run.ts";
import { nightlyMarkdown, renderNightly } from "../../../ui/nightly.ts";
import { renderNoiseFloor } from "../../../ui/noise-floor.ts";
import { compareRuns, writeNoiseFloors } from "../../../harness/results/compare.ts";
import { aaInvocations, aaItems, noiseFloorFile } from "../../../harness/nightly/aa.ts";
import type { StackSpec } from "../../../core/limits.ts";
import type { CellPlan } from "../../../harness/runner/cell-plan.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { type Spec, writeRunRecord } from "../../helpers/run-records.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { pulumiStacks } from "../../../harness/provision/deployed.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";

let root = "";
let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-nightly-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A fresh results directory per test. */
function freshRoot(name: string): string {
  root = path.join(tmp, name);
  mkdirSync(root, { recursive: true });
  return root;
}

const writeRun = (s: Spec): RunRecord => writeRunRecord(root, s);

const tight = [1000, 1010, 990, 1005, 995];
const NIGHT1 = "2026-11-28T02:17:00.000Z";
const NIGHT2 = "2026-11-29T02:17:00.000Z";
const pairs = [{ stack: "local-quarter-core", scenario: "quickstart" }];

function writePlan(name: string, text: string): string {
  const f = path.join(tmp, name);
  writeFileSync(f, text);
  return f;
}

function planError(file: string): ConfigurationError {
  try {
    loadNightlyPlan(file);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigurationError);
    return e as ConfigurationError;
  }
  throw new Error("expected a ConfigurationError");
}

describe("nightly plan", () => {
  it("loads the shipped plan nightly/local.yaml", () => {
    const plan = loadNightlyPlan("nightly/local.yaml");
    expect(plan.entries.map((e) => e.stack)).toEqual(["local-quarter-core", "local-2-cores"]);
    expect(
      plan.entries.every(
        (e) =>
          e.replicates === 3 &&
          e.duration === "10s" &&
          e.warmup === "2s" &&
          e.scenario === "scenarios/quickstart.yaml",
      ),
    ).toBe(true);
  });

  it("loads the shipped plan nightly/azure.yaml: 000's two VM sizes, each a valid azure stack, the scenario valid for it", () => {
    const plan = loadNightlyPlan("nightly/azure.yaml");
    expect(plan.entries.map((e) => e.stack)).toEqual(["azure-d2s-v5", "azure-d4s-v5"]);
    for (const e of plan.entries) {
      const stack = loadStack(e.stack);
      expect(stack.platform).toBe("azure");
      // every cell maps onto the stack's hosts (the check `nightly` makes before deploying anything)
      for (const p of planCells(loadScenarioFile(e.scenario), e.scenario)) pulumiStacks().check(stack, [p]);
    }
  });

  it("names file, line and field of a bad value, an unknown key and a missing key", () => {
    const f = writePlan(
      "bad.yaml",
      [
        "entries:",
        "  - stack: local-quarter-core",
        "    scenario: scenarios/quickstart.yaml",
        "    replicates: 0",
        "  - stack: local-2-cores",
        "    scenario: scenarios/quickstart.yaml",
        "    duration: ten seconds",
        "    warmpu: 2s",
        "  - scenario: scenarios/quickstart.yaml",
        "",
      ].join("\n"),
    );
    const err = planError(f);
    expect(err.location).toMatch(/bad\.yaml:4$/);
    expect(err.field).toBe("entries.0.replicates");
    expect(err.message).toMatch(/bad\.yaml:4:\d+: entries\.0\.replicates: /);
    expect(err.message).toMatch(/bad\.yaml:7:\d+: entries\.1\.duration: /);
    expect(err.message).toMatch(
      /bad\.yaml:8:\d+: entries\.1\.warmpu: unknown key "warmpu"; allowed keys: stack, scenario, replicates, duration, warmup/,
    );
    expect(err.message).toMatch(/bad\.yaml:9:\d+: entries\.2\.stack: required, but missing/);
  });

  it("refuses an empty plan and a (stack, scenario) given twice", () => {
    expect(planError(writePlan("empty.yaml", "entries: []\n")).message).toMatch(
      /empty\.yaml:1:\d+: entries: at least one entry/,
    );
    const dup = planError(
      writePlan(
        "dup.yaml",
        [
          "entries:",
          "  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml }",
          "  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml, replicates: 2 }",
          "",
        ].join("\n"),
      ),
    );
    expect(dup.message).toMatch(/dup\.yaml:3:\d+: entries\.1: .*already entry 0/);
  });

  it("refuses an entry's duration or warmup beyond a week, at its line", () => {
    const err = planError(
      writePlan(
        "long.yaml",
        "entries:\n  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml, duration: 8d, warmup: 99999999999999999999h }\n",
      ),
    );
    expect(err.message).toMatch(
      /long\.yaml:2:\d+: entries\.0\.duration: "8d" is more than 7d, the longest a run's durations may be/,
    );
    expect(err.message).toMatch(
      /long\.yaml:2:\d+: entries\.0\.warmup: "99999999999999999999h" is more than 7d/,
    );
  });

  it("refuses an entry's replicates above 1000, as a scenario's", () => {
    const err = planError(
      writePlan(
        "many.yaml",
        "entries:\n  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml, replicates: 1001 }\n",
      ),
    );
    expect(err.message).toMatch(/many\.yaml:2:\d+: entries\.0\.replicates: .*1000/);
  });

  it("reports a YAML syntax error with its line", () => {
    expect(planError(writePlan("syntax.yaml", "entries:\n  - { stack: a, scenario: b\n")).message).toMatch(
      /syntax\.yaml:\d+:\d+: YAML syntax error/,
    );
  });
});

describe("nightly decision", () => {
  it("a night 30 % slower with tight replicates is a regression: exit 1, the cell named", async () => {
    const r = freshRoot("slower");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v });
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 0.7 });
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(1);
    expect(d.regressions.map((c) => `${c.stack}/${c.scenario}/${c.cell}`)).toEqual([
      "local-quarter-core/quickstart/default",
    ]);
    expect(d.regressions[0]!.ratio).toBeCloseTo(0.7, 2);
    expect(d.pairs[0]).toMatchObject({ status: "compared", previous: NIGHT1, latest: NIGHT2 });
    const text = renderNightly(d);
    expect(text).toMatch(
      /REGRESSION: 1 cell\(s\) significantly slower than the previous night: local-quarter-core\/quickstart\/default \(0\.70x\)/,
    );
    expect(nightlyMarkdown(d)).toContain("**Regression** in `local-quarter-core/quickstart/default`");
  });

  it("names only the slower cells of a matrix, and not a faster one", async () => {
    const r = freshRoot("matrix");
    for (const v of tight) {
      writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v, cell: "batch=1000" });
      writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v, cell: "batch=8000" });
    }
    for (const v of tight) {
      writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 1.3, cell: "batch=1000" });
      writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 0.7, cell: "batch=8000" });
    }
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(1);
    expect(d.regressions.map((c) => c.cell)).toEqual(["batch=8000"]);
    expect(d.pairs[0]!.cells.find((c) => c.cell === "batch=1000")).toMatchObject({
      change: "faster",
      significant: true,
    });
  });

  it("identical nights: no regression, exit 0", async () => {
    const r = freshRoot("same");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v });
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v });
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(0);
    expect(d.regressions).toEqual([]);
    expect(d.pairs[0]!.cells[0]).toMatchObject({ significant: false, change: "none" });
    expect(renderNightly(d)).toMatch(/no regression$/);
  });

  it("storage per million rows is carried per cell against the same baseline nights: shown, a 20 % growth reported (not failing), a 1 % one not", async () => {
    const r = freshRoot("storage");
    const NIGHT3 = "2026-11-30T02:17:00.000Z";
    for (const v of tight) {
      writeRun({
        stack: "local-quarter-core",
        invocation: NIGHT1,
        rows: v,
        cell: "a",
        storageBytesPerMillionRows: 100 * 2 ** 20,
      });
      writeRun({
        stack: "local-quarter-core",
        invocation: NIGHT1,
        rows: v,
        cell: "b",
        storageBytesPerMillionRows: 50 * 2 ** 20,
      });
      writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v, cell: "c" });
      writeRun({
        stack: "local-quarter-core",
        invocation: NIGHT2,
        rows: v,
        cell: "a",
        storageBytesPerMillionRows: 102 * 2 ** 20,
      });
      writeRun({
        stack: "local-quarter-core",
        invocation: NIGHT2,
        rows: v,
        cell: "b",
        storageBytesPerMillionRows: 50 * 2 ** 20,
      });
      writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v, cell: "c" });
      // tonight: a grows 20 % beyond both nights, b 1 % (outside the range, below 5 %), c records none
      writeRun({
        stack: "local-quarter-core",
        invocation: NIGHT3,
        rows: v,
        cell: "a",
        storageBytesPerMillionRows: 121.2 * 2 ** 20,
      });
      writeRun({
        stack: "local-quarter-core",
        invocation: NIGHT3,
        rows: v,
        cell: "b",
        storageBytesPerMillionRows: 50.5 * 2 ** 20,
      });
      writeRun({ stack: "local-quarter-core", invocation: NIGHT3, rows: v, cell: "c" });
    }
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(0);
    const cell = (name: string) => d.pairs[0]!.cells.find((c) => c.cell === name)!;
    expect(cell("a").storage).toEqual({
      latestBytesPerMillionRows: 121.2 * 2 ** 20,
      baselineNights: [
        { invocation: NIGHT1, bytesPerMillionRows: 100 * 2 ** 20 },
        { invocation: NIGHT2, bytesPerMillionRows: 102 * 2 ** 20 },
      ],
      baselineBytesPerMillionRows: 101 * 2 ** 20,
      ratio: 1.2,
      change: "larger",
    });
    expect(cell("b").storage).toMatchObject({ ratio: 1.01, change: "none" });
    expect(cell("c").storage).toBeNull();
    expect(d.storageChanges.map((c) => c.cell)).toEqual(["a"]);
    const text = renderNightly(d);
    expect(text).toContain("disk MiB/M rows");
    expect(text).toContain("121.2 (1.20x)");
    expect(text).toMatch(
      /local-quarter-core\/quickstart\/a: storage larger: 121\.20 MiB per million rows, 1\.20x the baseline nights' 101\.00 \(range 100\.00–102\.00; reported, not failing\)/,
    );
    expect(text).toMatch(/no regression$/);
    const md = nightlyMarkdown(d);
    expect(md).toContain("| disk MiB/M rows |");
    expect(md).toMatch(
      /\*\*Storage changed\*\* \(reported, not failing\)\n\n- local-quarter-core\/quickstart\/a: storage larger/,
    );
    // baseline nights that recorded no storage (before the sink could say): tonight's value, no ratio, no change
    const before = freshRoot("storage-before");
    for (const v of tight) {
      writeRunRecord(before, { stack: "local-quarter-core", invocation: NIGHT1, rows: v });
      writeRunRecord(before, {
        stack: "local-quarter-core",
        invocation: NIGHT2,
        rows: v,
        storageBytesPerMillionRows: 7,
      });
    }
    const one = await decideNightly(before, pairs);
    expect(one.pairs[0]!.cells[0]!.storage).toEqual({
      latestBytesPerMillionRows: 7,
      baselineNights: [],
      baselineBytesPerMillionRows: null,
      ratio: null,
      change: null,
    });
    expect(renderNightly(one)).toMatch(/│ 0\.0 +│/);
  });

  it("two identical nights of 2 replicates are inconclusive, not a 0.93x regression (the false alarm this rule stops)", async () => {
    const r = freshRoot("two-reps");
    for (const v of [100_000, 101_000])
      writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v });
    for (const v of [93_000, 94_000]) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v });
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(0);
    expect(d.regressions).toEqual([]);
    expect(d.inconclusive.map((c) => c.cell)).toEqual(["default"]);
    expect(d.pairs[0]!.cells[0]).toMatchObject({
      inconclusive: true,
      significant: false,
      n: { previous: 2, latest: 2 },
    });
    const text = renderNightly(d);
    expect(text).toMatch(/inconclusive \(n=2\/2\)/);
    expect(text).toMatch(/no regression; 1 cell\(s\) inconclusive: fewer than 3 measured runs in a night/);
    expect(nightlyMarkdown(d)).toMatch(/No regression; 1 cell\(s\) inconclusive/);
  });

  it("a slowdown within the stack's A/A noise floor is not a regression; beyond it, it is", async () => {
    const r = freshRoot("noise");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v });
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 0.9 });
    expect((await decideNightly(r, pairs)).exitCode).toBe(1);
    const aa = (floor: number) =>
      writeNoiseFloors(r, {
        stack: "local-quarter-core",
        scenario: "quickstart",
        invocation: `${NIGHT1}/A`,
        createdAt: NIGHT1,
        confidence: 0.9,
        cells: [
          {
            cell: "default",
            floor,
            ratio: 1 + floor,
            ci: [1, 1 + 2 * floor],
            halfWidth: floor,
            n: { a: 3, b: 3 },
            inconclusive: false,
            reason: "synthetic",
          },
        ],
      });
    await aa(0.12);
    const within = await decideNightly(r, pairs);
    expect(within.exitCode).toBe(0);
    expect(within.pairs[0]!.cells[0]).toMatchObject({ significant: false, noiseFloor: 0.12 });
    expect(renderNightly(within)).toMatch(/±12\.0 %/);
    await aa(0.04);
    const beyond = await decideNightly(r, pairs);
    expect(beyond.exitCode).toBe(1);
    expect(beyond.regressions[0]).toMatchObject({ cell: "default", noiseFloor: 0.04 });
  });

  it("only one night: exit 0 and says there is no previous night", async () => {
    const r = freshRoot("one");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v });
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(0);
    expect(d.pairs[0]).toMatchObject({ status: "no-previous", latest: NIGHT2, previous: null });
    expect(renderNightly(d)).toMatch(/no previous night/);
  });

  it("changed component versions: environment changed, no verdict (exit 0), the differences listed; --force compares across it", async () => {
    const r = freshRoot("versions");
    for (const v of tight)
      writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v, postgres: "18.3" });
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 0.7 });
    const changed = await decideNightly(r, pairs);
    expect(changed.pairs[0]!.status).toBe("environment-changed");
    expect(changed.exitCode).toBe(0);
    expect(changed.regressions).toEqual([]);
    expect(changed.pairs[0]!.differences).toContain("versions.postgres.running: previous 18.3; latest 18.4");
    expect(renderNightly(changed)).toMatch(/environment changed, no verdict/);
    const forced = await decideNightly(r, pairs, { force: true });
    expect(forced.exitCode).toBe(1);
  });
});

describe("A/A", () => {
  it("makes every planned run twice, A and B back to back in the plans' order, the first of each pair drawn from the seed", () => {
    const stack = { name: "local-quarter-core" } as StackSpec;
    const plans = [
      ["batch=1000", 1],
      ["batch=8000", 1],
      ["batch=8000", 2],
      ["batch=1000", 2],
      ["batch=1000", 3],
      ["batch=8000", 3],
    ].map(([cell, replicate]) => ({ scenario: "quickstart", cell, replicate }) as CellPlan);
    const items = aaItems(stack, plans, 42, NIGHT1);
    expect(items).toHaveLength(12);
    for (let i = 0; i < plans.length; i++) {
      const pair = items.slice(2 * i, 2 * i + 2);
      expect(pair.map((x) => x.plan.cell)).toEqual([plans[i]!.cell, plans[i]!.cell]);
      expect(pair.map((x) => x.group).sort()).toEqual(["A", "B"]);
      for (const x of pair) {
        expect(x.plan.scenario).toBe("quickstart.aa");
        expect(x.invocation).toBe(x.group === "A" ? `${NIGHT1}/A` : `${NIGHT1}/B`);
      }
    }
    const firsts = items.filter((_, i) => i % 2 === 0).map((x) => x.group);
    expect(new Set(firsts).size).toBe(2); // not always the same group first
    expect(aaItems(stack, plans, 42, NIGHT1).map((x) => x.group)).toEqual(items.map((x) => x.group)); // deterministic
    expect(plans[0]!.scenario).toBe("quickstart"); // the plans themselves are not changed
  });

  it("turns B vs A into a noise floor per cell: max(CI half-width, |ratio − 1|), inconclusive below 3 runs a group", async () => {
    const r = freshRoot("aa");
    const inv = aaInvocations(NIGHT1);
    for (const v of [1000, 1030, 970])
      writeRun({ stack: "local-quarter-core", invocation: inv.a, rows: v, cell: "batch=1000" });
    for (const v of [1010, 980, 1040])
      writeRun({ stack: "local-quarter-core", invocation: inv.b, rows: v, cell: "batch=1000" });
    for (const v of [2000, 2010])
      writeRun({ stack: "local-quarter-core", invocation: inv.a, rows: v, cell: "batch=8000" });
    for (const v of [2100, 2110])
      writeRun({ stack: "local-quarter-core", invocation: inv.b, rows: v, cell: "batch=8000" });
    const c = await compareRuns(
      r,
      "quickstart",
      "local-quarter-core",
      { baseline: inv.a, contenders: [inv.b] },
      { noiseFloors: false },
    );
    const f = noiseFloorFile(c, "quickstart", NIGHT1);
    const [c1000, c8000] = f.cells;
    expect(c1000).toMatchObject({ cell: "batch=1000", n: { a: 3, b: 3 }, inconclusive: false });
    expect(c1000!.ratio).toBeCloseTo(1010 / 1000, 12);
    // n = 3: the 90 % interval is the whole range of ratios [970/1030, 1040/970]
    expect(c1000!.ci![0]).toBeCloseTo(980 / 1030, 12);
    expect(c1000!.ci![1]).toBeCloseTo(1040 / 970, 12);
    expect(c1000!.halfWidth).toBeCloseTo((1040 / 970 - 980 / 1030) / 2, 12);
    expect(c1000!.floor).toBeCloseTo(Math.max(c1000!.halfWidth!, 0.01), 12);
    expect(c8000).toMatchObject({ cell: "batch=8000", n: { a: 2, b: 2 }, inconclusive: true });
    expect(c8000!.floor).toBeCloseTo(2105 / 2005 - 1, 12); // |ratio − 1| beats the (too narrow) half-width
    const text = renderNoiseFloor(f, "results/x/quickstart.aa/noise-floor.json");
    expect(text).toMatch(/batch=8000 .*inconclusive \(n=2\/2\): floor underestimated/);
    expect(text).toMatch(/batch=1000 .*±\d+\.\d %/);
  });
});
