import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../harness/errors.ts";
import { loadNightlyPlan } from "../../../harness/nightly/plan.ts";
import { decideNightly, nightlyMarkdown, renderNightly } from "../../../harness/nightly/run.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { type Spec, writeRunRecord } from "../../helpers/run-records.ts";

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
    expect(plan.entries.every((e) => e.replicates === 3 && e.duration === "10s" && e.warmup === "2s" && e.scenario === "scenarios/quickstart.yaml")).toBe(true);
  });

  it("names file, line and field of a bad value, an unknown key and a missing key", () => {
    const f = writePlan("bad.yaml", [
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
    ].join("\n"));
    const err = planError(f);
    expect(err.location).toMatch(/bad\.yaml:4$/);
    expect(err.field).toBe("entries.0.replicates");
    expect(err.message).toMatch(/bad\.yaml:4:\d+: entries\.0\.replicates: /);
    expect(err.message).toMatch(/bad\.yaml:7:\d+: entries\.1\.duration: /);
    expect(err.message).toMatch(/bad\.yaml:8:\d+: entries\.1\.warmpu: unknown key "warmpu"; allowed keys: stack, scenario, replicates, duration, warmup/);
    expect(err.message).toMatch(/bad\.yaml:9:\d+: entries\.2\.stack: required, but missing/);
  });

  it("refuses an empty plan and a (stack, scenario) given twice", () => {
    expect(planError(writePlan("empty.yaml", "entries: []\n")).message).toMatch(/empty\.yaml:1:\d+: entries: at least one entry/);
    const dup = planError(writePlan("dup.yaml", [
      "entries:",
      "  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml }",
      "  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml, replicates: 2 }",
      "",
    ].join("\n")));
    expect(dup.message).toMatch(/dup\.yaml:3:\d+: entries\.1: .*already entry 0/);
  });

  it("reports a YAML syntax error with its line", () => {
    expect(planError(writePlan("syntax.yaml", "entries:\n  - { stack: a, scenario: b\n")).message).toMatch(/syntax\.yaml:\d+:\d+: YAML syntax error/);
  });
});

describe("nightly decision", () => {
  it("a night 30 % slower with tight replicates is a regression: exit 1, the cell named", async () => {
    const r = freshRoot("slower");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v });
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 0.7 });
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(1);
    expect(d.regressions.map((c) => `${c.stack}/${c.scenario}/${c.cell}`)).toEqual(["local-quarter-core/quickstart/default"]);
    expect(d.regressions[0]!.ratio).toBeCloseTo(0.7, 2);
    expect(d.pairs[0]).toMatchObject({ status: "compared", previous: NIGHT1, latest: NIGHT2 });
    const text = renderNightly(d);
    expect(text).toMatch(/REGRESSION: 1 cell\(s\) significantly slower than the previous night: local-quarter-core\/quickstart\/default \(0\.70x\)/);
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
    expect(d.pairs[0]!.cells.find((c) => c.cell === "batch=1000")).toMatchObject({ change: "faster", significant: true });
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

  it("only one night: exit 0 and says there is no previous night", async () => {
    const r = freshRoot("one");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v });
    const d = await decideNightly(r, pairs);
    expect(d.exitCode).toBe(0);
    expect(d.pairs[0]).toMatchObject({ status: "no-previous", latest: NIGHT2, previous: null });
    expect(renderNightly(d)).toMatch(/no previous night/);
  });

  it("changed component versions are refused (exit 2) unless forced", async () => {
    const r = freshRoot("versions");
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT1, rows: v, postgres: "18.3" });
    for (const v of tight) writeRun({ stack: "local-quarter-core", invocation: NIGHT2, rows: v * 0.7 });
    const refused = await decideNightly(r, pairs);
    expect(refused.pairs[0]!.status).toBe("error");
    expect(refused.exitCode).toBe(2);
    const forced = await decideNightly(r, pairs, { force: true });
    expect(forced.exitCode).toBe(1);
  });
});
