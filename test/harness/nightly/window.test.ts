// The nightly baseline from a window of nights (harness/nightly/window.ts), on synthetic but realistic run.json
// histories written to a temp results directory: nights of 3 replicates with run-to-run and night-to-night noise drawn
// from a seeded stream (so the statistics are ours and nothing depends on this machine's speed).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadNightlyPlan } from "../../../harness/nightly/plan.ts";
import { decideNightly, type NightlyDecision } from "../../../harness/nightly/run.ts";
import { nightlyMarkdown, renderNightly } from "../../../ui/nightly.ts";
import {
  compareRuns,
  compareStacks,
  renderComparison,
  renderRunsComparison,
} from "../../../harness/results/compare.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { measuredOnLine } from "../../../harness/results/format.ts";
import { seededUniform } from "../../../harness/stats/bootstrap.ts";
import { type Spec, writeRunRecord } from "../../helpers/run-records.ts";

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-window-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

const STACK = "local-quarter-core";
const pairs = [{ stack: STACK, scenario: "quickstart" }];

/** Night n (1-based) at 02:17 UTC, one day apart from 2026-11-01. */
const night = (n: number): string => new Date(Date.UTC(2026, 10, n, 2, 17)).toISOString();

/** Write a run as writeRunRecord does, then apply `patch` to its run.json (fields the helper does not set). */
function writeRun(root: string, s: Spec, patch: (r: RunRecord) => void = () => {}): RunRecord {
  const r = writeRunRecord(root, s);
  patch(r);
  writeFileSync(
    path.join(root, s.stack, "quickstart", r.runId, "run.json"),
    `${JSON.stringify(r, null, 2)}\n`,
  );
  return r;
}

/** Cut the sink's CPU cap by a third in a run's limits (as a stack file with cpu 0.1667 instead of 0.25 would). */
const cutSinkCap = (r: RunRecord): void => {
  r.limits.sink!.requested.cpu = "0.1667";
  r.limits.sink!.applied.cfsQuotaUs = 16_667;
};

/**
 * One night of `replicates` runs per cell around `level` rows/s: a night-to-night factor (±1.5 % uniform) and a
 * run-to-run factor (±2 % uniform) from the seeded stream.
 */
function writeNight(
  root: string,
  n: number,
  level: number,
  next: () => number,
  options: {
    cells?: string[];
    replicates?: number;
    patch?: (r: RunRecord) => void;
    spec?: Partial<Spec>;
  } = {},
): void {
  for (const cell of options.cells ?? ["default"]) {
    const nightFactor = 1 + 0.03 * (next() - 0.5);
    for (let i = 0; i < (options.replicates ?? 3); i++) {
      writeRun(
        root,
        {
          stack: STACK,
          invocation: night(n),
          rows: level * nightFactor * (1 + 0.04 * (next() - 0.5)),
          cell,
          ...options.spec,
        },
        options.patch,
      );
    }
  }
}

const names = (d: NightlyDecision): string[] =>
  d.regressions.map((c) => `${c.stack}/${c.scenario}/${c.cell}`);

describe("nightly from a window of nights", () => {
  const root = (): string => path.join(tmp, "history");
  const next = seededUniform(20261101);
  const decisions: NightlyDecision[] = [];

  beforeAll(async () => {
    mkdirSync(root(), { recursive: true });
    // nights 1–5 identical (with noise), 6 with the sink cap cut by a third (a CPU-bound sink: −33 %), 7 as 1–5;
    // the job decides after every night, as the workflow does
    for (let n = 1; n <= 7; n++) {
      writeNight(
        root(),
        n,
        n === 6 ? 100_000 * (2 / 3) : 100_000,
        next,
        n === 6 ? { patch: cutSinkCap } : {},
      );
      decisions.push(await decideNightly(root(), pairs));
    }
  });

  it("five identical nights: no regression on any of them", () => {
    expect(decisions[0]!.pairs[0]).toMatchObject({ status: "no-previous" });
    for (const d of decisions.slice(1, 5)) {
      expect(d.exitCode).toBe(0);
      expect(d.regressions).toEqual([]);
      expect(d.pairs[0]!.cells[0]).toMatchObject({ significant: false, change: "none" });
    }
    // nights 2–3 rest on 1–2 earlier nights (pooled runs); from night 4 on the window test measures between-night noise
    expect(decisions.slice(1, 5).map((d) => d.pairs[0]!.cells[0]!.method)).toEqual([
      "runs",
      "runs",
      "window",
      "window",
    ]);
    const fifth = decisions[4]!.pairs[0]!.cells[0]!;
    expect(fifth.baselineNights.map((b) => b.invocation)).toEqual([1, 2, 3, 4].map(night));
    expect(fifth.noiseFloorSource).toBe("nights");
    expect(fifth.noiseFloor!).toBeGreaterThan(0);
    expect(fifth.noiseFloor!).toBeLessThan(0.05);
  });

  it("a sixth night with the sink cap cut by a third is a regression: exit 1, named, against the five nights", () => {
    const d = decisions[5]!;
    expect(d.exitCode).toBe(1);
    expect(names(d)).toEqual([`${STACK}/quickstart/default`]);
    const c = d.regressions[0]!;
    expect(c.method).toBe("window");
    expect(c.baselineNights.map((b) => b.invocation)).toEqual([1, 2, 3, 4, 5].map(night));
    expect(c.ratio!).toBeGreaterThan(0.6);
    expect(c.ratio!).toBeLessThan(0.72);
    expect(c.ci![1]).toBeLessThan(1);
    expect(c.pAdjusted.slower).toBeLessThan(0.001);
    // the cap cut is listed between the last baseline night and tonight
    expect(d.pairs[0]!.differences).toContain("limits.sink.cfsQuotaUs: previous 25000; latest 16667");
    const text = renderNightly(d);
    expect(text).toMatch(
      new RegExp(
        `REGRESSION: 1 cell\\(s\\) significantly slower than their baseline of previous good nights: ${STACK}/quickstart/default \\(0\\.\\d\\dx\\)`,
      ),
    );
    expect(nightlyMarkdown(d)).toContain(`**Regression** in \`${STACK}/quickstart/default\``);
  });

  it("a seventh night equal to the first five is not a regression: the sixth is not in its baseline", () => {
    const d = decisions[6]!;
    expect(d.exitCode).toBe(0);
    expect(d.regressions).toEqual([]);
    const c = d.pairs[0]!.cells[0]!;
    expect(c.baselineNights.map((b) => b.invocation)).toEqual([1, 2, 3, 4, 5].map(night));
    expect(c.skippedNights).toEqual([
      { invocation: night(6), reason: "a regression night: never part of a baseline" },
    ]);
    expect(c.ratio!).toBeGreaterThan(0.95);
    expect(c.ratio!).toBeLessThan(1.05);
    // against the sixth night alone it would have looked 1.5x faster
    expect(c.change).toBe("none");
    expect(renderNightly(d)).toMatch(
      new RegExp(
        `${STACK}/quickstart/default: left out of the baseline: ${night(6).replace(/\./g, "\\.")} \\(a regression night`,
      ),
    );
  });

  it("K comes from the plan or the flag: a window of 3 uses the three last good nights", async () => {
    const d = await decideNightly(root(), pairs, { window: 3 });
    expect(d.window).toBe(3);
    expect(d.pairs[0]!.cells[0]!.baselineNights.map((b) => b.invocation)).toEqual([3, 4, 5].map(night));
    const plan = path.join(tmp, "plan.yaml");
    writeFileSync(
      plan,
      "window: 3\nentries:\n  - { stack: local-quarter-core, scenario: scenarios/quickstart.yaml }\n",
    );
    expect(loadNightlyPlan(plan).window).toBe(3);
    writeFileSync(
      plan,
      "window: 0\nentries:\n  - { stack: local-quarter-core, scenario: scenarios/quickstart.yaml }\n",
    );
    expect(() => loadNightlyPlan(plan)).toThrow(/plan\.yaml:1:\d+: window: /);
  });
});

describe("environment", () => {
  it('a changed kernel gives "environment changed, no verdict"; the next night in the new environment rests on it alone', async () => {
    const root = path.join(tmp, "env");
    const next = seededUniform(7);
    for (let n = 1; n <= 5; n++) writeNight(root, n, 50_000, next);
    writeNight(root, 6, 35_000, next, { spec: { kernel: "Linux 6.19.1" } });
    const d = await decideNightly(root, pairs);
    expect(d.exitCode).toBe(0);
    expect(d.regressions).toEqual([]);
    expect(d.pairs[0]!.status).toBe("environment-changed");
    expect(d.pairs[0]!.cells[0]).toMatchObject({
      environmentChanged: true,
      method: null,
      significant: false,
    });
    expect(d.pairs[0]!.message).toMatch(
      /environment changed, no verdict: tonight ran on cpuModel=AMD EPYC; kernel=Linux 6\.19\.1/,
    );
    expect(d.pairs[0]!.differences).toContain("kernel: previous Linux 6.18.44; latest Linux 6.19.1");
    expect(renderNightly(d)).toMatch(/environment changed, no verdict/);
    // --force uses the other environment's nights (and then sees the drop)
    expect((await decideNightly(root, pairs, { force: true })).exitCode).toBe(1);
    // night 7 in the new kernel: its baseline is night 6 only, never nights 1–5
    writeNight(root, 7, 35_000, next, { spec: { kernel: "Linux 6.19.1" } });
    const d7 = await decideNightly(root, pairs);
    expect(d7.pairs[0]!.status).toBe("compared");
    expect(d7.pairs[0]!.cells[0]!.baselineNights.map((b) => b.invocation)).toEqual([night(6)]);
    expect(d7.exitCode).toBe(0);
  });
});

describe("drift", () => {
  it("1 % slower every night, never 5 % from one night to the next: drift reported (Mann–Kendall, Theil–Sen), no regression", async () => {
    const root = path.join(tmp, "drift");
    const next = seededUniform(99);
    const levels: number[] = [];
    for (let n = 1; n <= 8; n++) {
      const level = 100_000 * 0.99 ** (n - 1);
      levels.push(level);
      for (let i = 0; i < 3; i++)
        writeRun(root, { stack: STACK, invocation: night(n), rows: level * (1 + 0.004 * (next() - 0.5)) });
    }
    for (let n = 1; n < levels.length; n++) expect(levels[n]! / levels[n - 1]!).toBeGreaterThan(0.95);
    const d = await decideNightly(root, pairs);
    expect(d.regressions).toEqual([]);
    expect(d.exitCode).toBe(0);
    const c = d.pairs[0]!.cells[0]!;
    expect(c.drift).toMatchObject({ points: 8, detected: true, direction: "slower" });
    expect(c.drift!.perDay).toBeCloseTo(-0.01, 2);
    expect(c.drift!.ci![1]).toBeLessThan(0);
    expect(c.drift!.overWindow).toBeLessThan(-0.06);
    expect(d.drifts.map((x) => x.cell)).toEqual(["default"]);
    expect(renderNightly(d)).toMatch(
      /quickstart\/default: drifting slower: Theil–Sen -(0\.9\d|1\.0\d) %\/day, -\d\.\d % over 7 days \(Mann–Kendall p = /,
    );
  });

  it("flat nights with noise: no drift", async () => {
    const root = path.join(tmp, "flat");
    const next = seededUniform(5);
    for (let n = 1; n <= 8; n++) writeNight(root, n, 80_000, next);
    const d = await decideNightly(root, pairs);
    expect(d.pairs[0]!.cells[0]!.drift).toMatchObject({ points: 8, detected: false, direction: "none" });
    expect(d.drifts).toEqual([]);
  });
});

describe("multiple testing", () => {
  it("30 cells, one true regression: Holm flags it alone; a chance −7 % cell with p < 0.05 uncorrected is not flagged", async () => {
    const root = path.join(tmp, "many");
    const next = seededUniform(3);
    const cells = Array.from({ length: 30 }, (_, i) => `batch=${(i + 1) * 1000}`);
    // seven baseline nights; cell batch=1000 at exact night values (for the chance cell), the others with noise
    const marginal = [1000, 1040, 960, 1020, 980, 1010, 990];
    for (let n = 1; n <= 7; n++) {
      for (const cell of cells) {
        if (cell === "batch=1000") {
          for (const f of [0.99, 1, 1.01])
            writeRun(root, { stack: STACK, invocation: night(n), rows: marginal[n - 1]! * 100 * f, cell });
        } else {
          writeNight(root, n, 100_000, next, { cells: [cell] });
        }
      }
    }
    for (const cell of cells) {
      if (cell === "batch=1000")
        for (const f of [0.99, 1, 1.01])
          writeRun(root, { stack: STACK, invocation: night(8), rows: 93_000 * f, cell });
      else writeNight(root, 8, cell === "batch=17000" ? 100_000 * (2 / 3) : 100_000, next, { cells: [cell] });
    }
    const d = await decideNightly(root, pairs);
    expect(d.pairs[0]!.cells).toHaveLength(30);
    expect(d.exitCode).toBe(1);
    expect(d.regressions.map((c) => c.cell)).toEqual(["batch=17000"]);
    const chance = d.pairs[0]!.cells.find((c) => c.cell === "batch=1000")!;
    expect(chance.ratio!).toBeCloseTo(0.93, 6);
    expect(chance.candidate).toBe("slower"); // ≥ 5 % and beyond the cross-night floor (4.5 %)
    expect(chance.noiseFloor!).toBeCloseTo(1040 / 995 - 1, 6);
    expect(chance.p.slower).toBeLessThan(0.05); // uncorrected, a regression
    expect(chance.pAdjusted.slower).toBeGreaterThan(0.05); // over 30 cells, not
    expect(chance.significant).toBe(false);
    expect(chance.reason).toMatch(/Holm-adjusted over 30 cell\(s\)/);
    // alone (a family of one), the same nights of the same cell are called a regression
    const single = path.join(tmp, "one-cell");
    for (let n = 1; n <= 8; n++) {
      for (const f of [0.99, 1, 1.01])
        writeRun(single, {
          stack: STACK,
          invocation: night(n),
          rows: (n === 8 ? 930 : marginal[n - 1]!) * 100 * f,
          cell: "batch=1000",
        });
    }
    const alone = await decideNightly(single, pairs);
    expect(alone.regressions.map((c) => c.cell)).toEqual(["batch=1000"]);
    expect(alone.regressions[0]!.pAdjusted.slower).toBeLessThanOrEqual(0.05);
  }, 120_000);
});

describe("excluded runs", () => {
  it("failed, error, interrupted, unenforced and other-machine runs are left out and listed with reasons; partial and oversubscribed runs stay in, flagged", async () => {
    const root = path.join(tmp, "excluded");
    const next = seededUniform(11);
    writeNight(root, 1, 60_000, next);
    writeNight(root, 2, 60_000, next);
    const inv = night(2);
    const failed = writeRun(root, { stack: STACK, invocation: inv, rows: 10 }, (r) => {
      r.status = "failed";
      r.ledger!.lost = 3;
      r.checks = [{ check: "ledger.lost", expected: "= 0", actual: 3, ok: false }];
    });
    const error = writeRun(root, { stack: STACK, invocation: inv, rows: 0, status: "error" }, (r) => {
      r.error = { code: "E_PG_START", kind: "provisioning", message: "postgres did not start\nmore" };
    });
    const interrupted = writeRun(root, { stack: STACK, invocation: inv, rows: 20, status: "interrupted" });
    const unenforced = writeRun(root, { stack: STACK, invocation: inv, rows: 30 }, (r) => {
      r.limits.sink!.enforced = false;
      r.limits.sink!.notes = ["no cpu controller"];
    });
    const partial = writeRun(root, { stack: STACK, invocation: inv, rows: 40 }, (r) => {
      (r.limits.sink as { enforced: unknown }).enforced = "partial";
      r.limits.sink!.notes = ["cgroup v1 does not throttle buffered writes"];
    });
    const over = writeRun(root, { stack: STACK, invocation: inv, rows: 50 }, (r) => {
      (r as { oversubscribed?: unknown }).oversubscribed = { cores: "3.25 of 2" };
    });
    const machine = writeRun(root, { stack: STACK, invocation: inv, rows: 70 }, (r) => {
      r.environment.cpuModel = "Intel Xeon";
    });
    const d = await decideNightly(root, pairs);
    const p = d.pairs[0]!;
    const reason = (id: string): string => p.excluded.find((x) => x.runId === id)?.reason ?? "(not excluded)";
    expect(reason(failed.runId)).toBe("failed: ledger.lost (actual 3, expected = 0)");
    expect(reason(error.runId)).toBe("error E_PG_START: postgres did not start");
    expect(reason(interrupted.runId)).toMatch(/^interrupted/);
    expect(reason(unenforced.runId)).toBe("caps not enforced on sink: no cpu controller");
    // caps applied with a named gap (cgroup v1 buffered writes) or hosts that overlap on the machine: compared, flagged
    expect(reason(partial.runId)).toBe("(not excluded)");
    expect(reason(over.runId)).toBe("(not excluded)");
    expect(reason(machine.runId)).toMatch(
      /^other environment: cpuModel=Intel Xeon; .* \(the comparison's: cpuModel=AMD EPYC; /,
    );
    expect(p.excluded.map((x) => x.kind).sort()).toEqual([
      "caps",
      "environment",
      "status",
      "status",
      "status",
    ]);
    // tonight's figure rests on its three good runs and the partial and oversubscribed ones
    expect(p.cells[0]!.n.latest).toBe(5);
    expect(d.regressions).toEqual([]);
    const text = renderNightly(d);
    expect(text).toContain(`${STACK}/quickstart: excluded runs (not used):`);
    expect(text).toContain(`${unenforced.runId} (${STACK}, default, ${inv}): caps not enforced on sink`);
    expect(nightlyMarkdown(d)).toContain("**Excluded runs**");
    const json = JSON.parse(JSON.stringify(d)) as NightlyDecision;
    expect(json.pairs[0]!.excluded).toHaveLength(5);

    // compare across runs leaves the same runs out, in --json and below the table
    const c = await compareRuns(root, "quickstart", STACK, { baseline: night(1), contenders: [night(2)] });
    expect(c.excluded.map((x) => x.runId).sort()).toEqual(
      [failed, error, interrupted, unenforced, machine].map((r) => r.runId).sort(),
    );
    expect(c.cells[0]!.contenders[0]!).toMatchObject({ runs: 10, measured: 5 });
    expect(renderRunsComparison(c)).toMatch(
      new RegExp(`excluded runs \\(5, not used in any figure above\\):\\n {2}\\S+ \\(${STACK}, default, `),
    );
    // the figures name the machine of the runs they rest on (the Intel Xeon run is excluded, so only the EPYC shows)
    expect(renderRunsComparison(c)).toContain("\nmeasured on AMD EPYC, 2 cores, kernel 6.18.44, cgroup v1\n");
    // and compare across stacks (the stack's latest invocation)
    const rows = await compareStacks(root, "quickstart", [STACK]);
    expect(rows[0]!.measured).toHaveLength(5);
    expect(rows[0]!.excluded).toHaveLength(5);
    expect(renderComparison("quickstart", rows)).toContain("excluded runs (5, not used in any figure above)");
    expect(renderComparison("quickstart", rows)).toContain(
      "\nmeasured on AMD EPYC, 2 cores, kernel 6.18.44, cgroup v1\n",
    );
    expect(
      measuredOnLine([
        { label: "a", machine: rows[0]!.fingerprint },
        { label: "b", machine: { cpuModel: "Intel Xeon", cores: 4, kernel: "Linux 6.1.0", cgroup: "v2" } },
      ]),
    ).toBe(
      "measured on: a AMD EPYC | Intel Xeon, 2 cores, kernel 6.18.44, cgroup v1; b Intel Xeon, 4 cores, kernel 6.1.0, cgroup v2",
    );
    expect(
      JSON.parse(readFileSync(path.join(root, STACK, "quickstart", failed.runId, "run.json"), "utf8")).status,
    ).toBe("failed");
  });
});

describe("history", () => {
  it("--require-history: a pair with no earlier night is a failure (exit 2, E_NIGHTLY_HISTORY); without it the first night bootstraps (exit 0)", async () => {
    const root = path.join(tmp, "first");
    writeNight(root, 1, 60_000, seededUniform(1));
    const boot = await decideNightly(root, pairs);
    expect(boot.exitCode).toBe(0);
    expect(boot.pairs[0]).toMatchObject({ status: "no-previous", code: null });
    expect(renderNightly(boot)).toMatch(/no previous night: nothing to compare with yet/);
    const required = await decideNightly(root, pairs, { requireHistory: true });
    expect(required.exitCode).toBe(2);
    expect(required.pairs[0]).toMatchObject({ status: "no-history", code: "E_NIGHTLY_HISTORY" });
    expect(renderNightly(required)).toMatch(
      /MISSING HISTORY: local-quarter-core\/quickstart had no earlier night although history was required \(E_NIGHTLY_HISTORY\)$/,
    );
    writeNight(root, 2, 60_000, seededUniform(2));
    expect((await decideNightly(root, pairs, { requireHistory: true })).exitCode).toBe(0);
  });
});
