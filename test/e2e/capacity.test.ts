// `ingestbench capacity` for real: syslog → syslog-ng 3.38 → PostgreSQL 18 on local-quarter-core (the sink capped to a
// quarter core), scenarios/syslog-ng-postgres-capacity.yaml, every step a real run of the runner. Then the found rate
// is checked by two more runs of the same cell: at 90 % of it the stack keeps up (a clean ledger, verdict steady, every
// bound of the search held), at 120 % it does not (some bound broke). Asserted is what the ledgers, the series and
// the verdicts say, never a rate. Lean: steps of 1 s warmup + 4 s measured at a half-second interval, at most 7.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadStack } from "../../infra/stack/schema.ts";
import { loadCapacity } from "../../harness/results/capacity.ts";
import { capacityCommand, capacityPlan, rateEntries, stepOffer } from "../../harness/runner/capacity-run.ts";
import { DEFAULT_BOUNDS, judgeStep } from "../../harness/runner/capacity.ts";
import { newBenchRun, projectRoot } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { expectCleanRun, readSeries } from "../helpers/pipeline-ledger.ts";

const STACK = "local-quarter-core";
const SCENARIO = path.join(projectRoot, "scenarios", "syslog-ng-postgres-capacity.yaml");
const STEP = { stepDuration: "4s", warmup: "1s" };
const results = mkdtempSync(path.join(os.tmpdir(), "ibtest-capacity-"));
afterAll(() => rmSync(results, { recursive: true, force: true }));

describe("capacity search on syslog-ng → PostgreSQL, local-quarter-core (real syslog-ng 3.38, PostgreSQL 18)", () => {
  it("finds a sustainable rate that a run at 90 % of it sustains (steady, no loss) and a run at 120 % does not", async () => {
    const stack = loadStack(STACK, path.join(projectRoot, "stacks"));
    // tolerance 15 %: the first bad rate is below 120 % of the last good one
    const code = await capacityCommand(SCENARIO, { results, ...STEP, startRate: "1000", tolerance: "0.15", maxSteps: 7, progress: "quiet" }, { projectRoot, resultsRoot: results, stacks: [stack], lockWaitMs: 600_000 });
    const file = loadCapacity(results, STACK, "syslog-ng-postgres-capacity");
    expect(file).not.toBeNull();
    const r = file!.result;
    console.log(`capacity on ${STACK}: ${r.steps.map((s) => `${s.offeredPerSec}/s ${s.ok ? "ok" : s.boundBy.join("+")}`).join(", ")}; sustainable ${r.sustainableRate} in [${r.interval.lastGood}, ${r.interval.firstBad}], stopped ${r.stopped}`);
    expect(code).toBe(0);
    expect(r.sustainableRate).not.toBeNull();
    expect(r.steps.length).toBeLessThanOrEqual(7);
    // every step is a run of its own beside capacity.json, each judged from its ledger and series
    const runs = readdirSync(path.join(results, STACK, "syslog-ng-postgres-capacity.capacity")).filter((d) => d !== "capacity.json");
    expect(runs.sort()).toEqual(r.steps.map((s) => s.runId).sort());
    for (const s of r.steps) expect(leftovers(s.runId.slice(-6))).toEqual([]);
    if (r.interval.firstBad !== null) expect(r.interval.firstBad).toBeLessThan(1.2 * r.sustainableRate!);
    const broke = r.steps[r.brokeAt! - 1]!;
    expect(broke.ok).toBe(false);
    expect(r.boundBy).toEqual(broke.boundBy);

    const plan = capacityPlan(SCENARIO, STEP);
    const entries = rateEntries(stack, plan);
    const at = async (share: number) => {
      const rate = Math.round(share * r.sustainableRate!);
      const run = newBenchRun(STACK, { ...plan, generator: { ...plan.generator, config: { ...plan.generator.config, rate } } });
      const record = await run.run();
      expect(leftovers(record.runId.slice(-6))).toEqual([]);
      return { record, judged: judgeStep(record, readSeries(run), stepOffer(plan, rate, entries), DEFAULT_BOUNDS) };
    };
    // 90 %: sustained as the Done-when says it, steady with no loss (the search's other bounds are printed: on a busy
    // machine the lag of one 4 s run can slope although the ledger and the verdict are clean)
    const below = await at(0.9);
    expectCleanRun(below.record);
    expect(below.record.summary!.saturation?.state, below.record.summary!.saturation?.evidence).toBe("steady");
    // 120 %: not sustained, by the search's own judgement (loss, the offered rate, p99, lag slope or the verdict)
    const above = await at(1.2);
    console.log(`at 90 %: ${below.judged.verdict}, ledger clean${below.judged.ok ? ", every bound held" : `; ${below.judged.reasons.join("; ")}`}; at 120 %: ${above.judged.boundBy.join("+")} (${above.judged.reasons.join("; ")})`);
    expect(above.judged.ok, above.judged.reasons.join("; ")).toBe(false);
  }, 900_000); // up to 9 real runs (each ~15 s here on a quiet machine, minutes on a busy one)
});
