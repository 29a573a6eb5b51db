// `ingestbench capacity` for real: syslog → syslog-ng 3.38 → PostgreSQL 18 on local-quarter-core (the sink capped to a
// quarter core), scenarios/syslog-ng-postgres-capacity.yaml, every step a real run of the runner. Asserted are the
// search's mechanics on those runs — each step a stored run judged from its own ledger and series, the next rate
// following from the judgement (×2 after a sustained ramp step, the midpoint once a step failed), capacity.json
// agreeing with the runs — never a rate: what a stack sustains depends on the machine and its neighbours, so the
// 90 % / 120 % check of the found rate is a benchmark (bench/capacity.ts, `npm run bench:capacity`). Lean: three steps
// of 1 s warmup + 3 s measured at a half-second interval.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadStack } from "../../infra/stack/schema.ts";
import { loadCapacity } from "../../harness/results/capacity.ts";
import type { RunRecord } from "../../harness/results/types.ts";
import { capacityCommand } from "../../harness/runner/capacity-run.ts";
import { projectRoot } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";

const STACK = "local-quarter-core";
const SCENARIO = path.join(projectRoot, "scenarios", "syslog-ng-postgres-capacity.yaml");
const STEP = { stepDuration: "3s", warmup: "1s" };
const results = mkdtempSync(path.join(os.tmpdir(), "ibtest-capacity-"));
afterAll(() => rmSync(results, { recursive: true, force: true }));

describe("capacity search on syslog-ng → PostgreSQL, local-quarter-core (real syslog-ng 3.38, PostgreSQL 18)", () => {
  it("runs each step as a stored real run judged from its ledger and series; the next rate follows the judgement; capacity.json agrees", async () => {
    const stack = loadStack(STACK, path.join(projectRoot, "stacks"));
    const code = await capacityCommand(
      SCENARIO,
      { results, ...STEP, startRate: "500", tolerance: "0.15", maxSteps: 3, progress: "quiet" },
      { projectRoot, resultsRoot: results, stacks: [stack], lockWaitMs: 600_000 },
    );
    const file = loadCapacity(results, STACK, "syslog-ng-postgres-capacity");
    expect(file).not.toBeNull();
    const r = file!.result;
    console.log(
      `capacity on ${STACK}: ${r.steps.map((s) => `${s.offeredPerSec}/s ${s.ok ? "ok" : s.boundBy.join("+")}`).join(", ")}; sustainable ${r.sustainableRate} in [${r.interval.lastGood}, ${r.interval.firstBad}], stopped ${r.stopped}`,
    );
    expect(code).toBe(r.sustainableRate === null ? 1 : 0);
    // no step errs; three steps unless the interval converged or no rate held down to the floor
    expect(["max-steps", "converged", "no-sustainable-rate"], `stopped: ${r.stopped}`).toContain(r.stopped);
    expect(r.steps.length).toBeLessThanOrEqual(3);
    if (r.stopped === "max-steps") expect(r.steps).toHaveLength(3);
    // every step is a run of its own beside capacity.json; a step is ok exactly when its run's ledger is clean
    const dir = path.join(results, STACK, "syslog-ng-postgres-capacity.capacity");
    const runs = readdirSync(dir).filter((d) => d !== "capacity.json");
    expect(runs.sort()).toEqual(r.steps.map((s) => s.runId).sort());
    for (const s of r.steps) {
      const record = JSON.parse(readFileSync(path.join(dir, s.runId, "run.json"), "utf8")) as RunRecord;
      const clean = record.status === "ok" && record.ledger?.lost === 0 && record.ledger?.duplicated === 0;
      if (s.ok) expect(clean, `step ${s.index} ok but run ${s.runId} is not clean`).toBe(true);
      else expect(s.boundBy.length).toBeGreaterThan(0);
      expect(leftovers(s.runId.slice(-6))).toEqual([]);
    }
    // the ramp doubles from the start rate while steps hold (halves while none has), then each step is the midpoint
    expect(r.steps[0]!.offeredPerSec).toBe(500);
    let good: number | null = null;
    let bad: number | null = null;
    for (let i = 0; i < r.steps.length; i++) {
      const s = r.steps[i]!;
      if (i > 0) {
        const prev = r.steps[i - 1]!.offeredPerSec;
        const expected = bad === null ? 2 * prev : good === null ? prev / 2 : (good + bad) / 2;
        expect(
          Math.abs(s.offeredPerSec - expected),
          `step ${s.index}: ${s.offeredPerSec} after [${good}, ${bad}]`,
        ).toBeLessThanOrEqual(1);
      }
      if (s.ok) good = Math.max(good ?? 0, s.offeredPerSec);
      else bad = Math.min(bad ?? Infinity, s.offeredPerSec);
    }
    expect(r.sustainableRate).toBe(good);
    expect(r.interval).toEqual({ lastGood: good, firstBad: bad });
    if (bad !== null) expect(r.steps[r.brokeAt! - 1]!.boundBy).toEqual(r.boundBy);
  }, 600_000);
});
