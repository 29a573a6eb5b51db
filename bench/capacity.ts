/**
 * `npm run bench:capacity`: `ingestbench capacity` on real stacks, then the found rate checked by two more runs of the
 * same cell: at 90 % of it the stack should keep up (clean ledger, verdict steady, every bound of the search held), at
 * 120 % it should not (some bound broke). What is sustainable depends on the machine and on what else runs on it, so
 * this is a benchmark that prints what it found with the machine named (docs/decisions/0007-every-number-names-its-
 * machine.md), not a test; test/e2e/capacity.test.ts checks the search's mechanics on real runs.
 *
 *   npm run bench:capacity -- [--stacks local-quarter-core,local-2-cores] [--scenario scenarios/syslog-ng-postgres-capacity.yaml]
 *                             [--step-duration 4s] [--warmup 1s] [--start-rate 1000] [--tolerance 0.15] [--max-steps 7]
 *
 * Needs root (the local platform). Results go to a temp directory under $TMPDIR, removed at the end (also on error).
 * Exit 0 when every stack's 90 % run held and its 120 % run broke, 1 otherwise.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { benchArgs, machineLine } from "./args.ts";
import { loadStack } from "../infra/stack/schema.ts";
import { loadCapacity } from "../harness/results/capacity.ts";
import type { SeriesPoint } from "../harness/results/types.ts";
import { capacityCommand, capacityPlan, rateEntries, stepOffer } from "../harness/runner/capacity-run.ts";
import { DEFAULT_BOUNDS, judgeStep } from "../harness/runner/capacity.ts";
import { BenchRun } from "../harness/runner/run.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const machine = machineLine;

const USAGE = `npm run bench:capacity -- [flags]: \`ingestbench capacity\` on real stacks, then the found rate checked by two
more runs of the same cell (at 90 % the stack should keep up, at 120 % it should not). Needs root. Exit 0 when every
stack's 90 % run held and its 120 % run broke, 1 otherwise.

  --stacks LIST        stacks to search (default local-quarter-core,local-2-cores)
  --scenario FILE      the scenario (default scenarios/syslog-ng-postgres-capacity.yaml)
  --step-duration D    measure of each search step (default 4s)
  --warmup D           warmup of each step (default 1s)
  --start-rate N       first offered rate, events/s (default 1000)
  --tolerance X        bisection stops within this share (default 0.15)
  --max-steps N        search steps at most (default 7)
  -h, --help           this text`;

const values = benchArgs(
  {
    stacks: { type: "string", default: "local-quarter-core,local-2-cores" },
    scenario: { type: "string", default: join(ROOT, "scenarios", "syslog-ng-postgres-capacity.yaml") },
    "step-duration": { type: "string", default: "4s" },
    warmup: { type: "string", default: "1s" },
    "start-rate": { type: "string", default: "1000" },
    tolerance: { type: "string", default: "0.15" },
    "max-steps": { type: "string", default: "7" },
  },
  USAGE,
);

async function main(): Promise<number> {
  const results = mkdtempSync(join(tmpdir(), "ib-bench-capacity-"));
  const step = { stepDuration: values["step-duration"]!, warmup: values.warmup! };
  const scenario = resolve(values.scenario!);
  let ok = true;
  console.log(`bench:capacity on ${machine()}`);
  try {
    for (const name of values.stacks!.split(",")) {
      const stack = loadStack(name, join(ROOT, "stacks"));
      const code = await capacityCommand(
        scenario,
        {
          results,
          ...step,
          startRate: values["start-rate"]!,
          tolerance: values.tolerance!,
          maxSteps: Number(values["max-steps"]),
          progress: "plain",
        },
        { projectRoot: ROOT, resultsRoot: results, stacks: [stack], lockWaitMs: 600_000 },
      );
      const plan = capacityPlan(scenario, step);
      const file = loadCapacity(results, name, plan.scenario);
      const rate = file?.result.sustainableRate ?? null;
      if (code !== 0 || rate === null) {
        console.log(`${name}: no sustainable rate found (exit ${code})`);
        ok = false;
        continue;
      }
      const entries = rateEntries(stack, plan);
      const at = async (share: number) => {
        const r = Math.round(share * rate);
        const run = new BenchRun({
          stack,
          plan: { ...plan, generator: { ...plan.generator, config: { ...plan.generator.config, rate: r } } },
          resultsRoot: results,
          invocation: new Date().toISOString(),
          projectRoot: ROOT,
        });
        const record = await run.run();
        const series = readFileSync(join(run.dir, "series.jsonl"), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as SeriesPoint);
        return { r, record, judged: judgeStep(record, series, stepOffer(plan, r, entries), DEFAULT_BOUNDS) };
      };
      const below = await at(0.9);
      const above = await at(1.2);
      const held = below.judged.ok && below.record.status === "ok";
      const broke = !above.judged.ok;
      ok &&= held && broke;
      console.log(
        `${name}: sustainable ${rate}/s; at 90 % (${below.r}/s): ${held ? "held" : `did not hold (${below.judged.reasons.join("; ")})`}; ` +
          `at 120 % (${above.r}/s): ${broke ? `broke (${above.judged.boundBy.join("+")}: ${above.judged.reasons.join("; ")})` : "also held"}`,
      );
    }
  } finally {
    rmSync(results, { recursive: true, force: true });
  }
  console.log(`machine at the end: ${machine()}`);
  return ok ? 0 : 1;
}

process.exitCode = await main();
