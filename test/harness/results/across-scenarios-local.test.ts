// compare across scenarios on run.json files kept from real local runs (test/fixtures/results/, made on AMD EPYC,
// 2 cores, kernel 6.18, cgroup v1, with `ingestbench bench --replicates 3 --warmup 1s --duration 6s` of
// scenarios/syslog-ng-postgres.yaml on local-pipeline and local-two-collectors and scenarios/syslog-ng-clickhouse.yaml
// on local-pipeline; two of the ClickHouse side's three runs erred on that busy machine and were left out): the two
// comparisons README.md documents, PostgreSQL vs ClickHouse behind one syslog-ng on one stack (write-up 004's
// side-by-side) and one vs two collectors (write-up 000's), without running a benchmark. Ratios are checked against
// the medians of the records themselves, never against machine speed.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compareCommand, type ScenariosComparison } from "../../../harness/results/compare.ts";
import { loadRuns } from "../../../harness/results/store.ts";
import { quantile } from "../../../harness/stats/descriptive.ts";

const root = path.resolve(import.meta.dirname, "../../fixtures/results");
const medianRows = async (stack: string, scenario: string): Promise<number> =>
  quantile(
    (await loadRuns(root, stack, scenario))
      .filter((r) => r.status === "ok")
      .map((r) => r.summary!.rowsPerSecond),
    0.5,
  );

describe("compare --scenarios on real local runs", () => {
  it("PostgreSQL vs ClickHouse behind syslog-ng on local-pipeline: one cell each, the sinks listed as what is compared", async () => {
    const c = JSON.parse(
      await compareCommand(root, {
        scenarios: "syslog-ng-postgres,syslog-ng-clickhouse",
        stacks: "local-pipeline",
        json: true,
      }),
    ) as ScenariosComparison;
    expect(c.sides.map((s) => s.label)).toEqual([
      "syslog-ng-postgres@local-pipeline",
      "syslog-ng-clickhouse@local-pipeline",
    ]);
    expect(c.machine).toMatch(/cpuModel=AMD EPYC; .*cores=2; cgroup=v1/);
    expect(c.items).toHaveLength(1);
    const k = c.items[0]!.contenders[0]!;
    expect(k.measured).toBe(1);
    expect(k.comparison!.ratio).toBeCloseTo(
      (await medianRows("local-pipeline", "syslog-ng-clickhouse")) /
        (await medianRows("local-pipeline", "syslog-ng-postgres")),
      10,
    );
    expect(k.reason).toMatch(/fewer than 3 values per side/);
    // each sink runs on one side only: listed as what the comparison is about, not refused
    expect(c.forced).toBe(false);
    expect(c.components.some((d) => d.field === "versions.clickhouse.running")).toBe(true);
    expect(c.components.some((d) => d.field === "versions.postgres.running")).toBe(true);
    const text = await compareCommand(root, {
      scenarios: "syslog-ng-postgres,syslog-ng-clickhouse",
      stacks: "local-pipeline",
    });
    expect(text).toMatch(/syslog-ng-clickhouse@local-pipeline .* 1\/1 .* n=1/);
  });

  it("one vs two collectors (local-pipeline vs local-two-collectors): the ratio of medians with its 90 % interval", async () => {
    const c = JSON.parse(
      await compareCommand(root, {
        scenarios: "syslog-ng-postgres,syslog-ng-postgres",
        stacks: "local-pipeline,local-two-collectors",
        json: true,
      }),
    ) as ScenariosComparison;
    expect(c.sides.map((s) => s.label)).toEqual([
      "syslog-ng-postgres@local-pipeline",
      "syslog-ng-postgres@local-two-collectors",
    ]);
    const k = c.items[0]!.contenders[0]!;
    expect([c.items[0]!.baseline.measured, k.measured]).toEqual([3, 3]);
    expect(k.comparison!.ratio).toBeCloseTo(
      (await medianRows("local-two-collectors", "syslog-ng-postgres")) /
        (await medianRows("local-pipeline", "syslog-ng-postgres")),
      10,
    );
    const [lo, hi] = k.comparison!.ci!;
    expect(lo).toBeLessThanOrEqual(k.comparison!.ratio);
    expect(hi).toBeGreaterThanOrEqual(k.comparison!.ratio);
    // one syslog-ng version on every collector host: nothing refused, no --force needed
    expect(c.forced).toBe(false);
    expect(
      await compareCommand(root, {
        scenarios: "syslog-ng-postgres,syslog-ng-postgres",
        stacks: "local-pipeline,local-two-collectors",
      }),
    ).toMatch(/syslog-ng-postgres@local-two-collectors .* 3\/3 .*x .*\[\d\.\d\d, \d\.\d\d\]/);
    // neither side has a query phase: --metric queries says so
    expect(
      await compareCommand(root, {
        scenarios: "syslog-ng-postgres,syslog-ng-postgres",
        stacks: "local-pipeline,local-two-collectors",
        metric: "queries",
      }),
    ).toMatch(/no query phase in either side/);
  });
});
