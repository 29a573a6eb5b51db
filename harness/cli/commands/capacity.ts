/**
 * `ingestbench capacity (--stack S | --stacks A,B) SCENARIO`: the highest offered rate an open-loop generator drives
 * through a stack while it keeps up, by a ramp and a bisection of measured runs (capacityCommand,
 * harness/runner/capacity-run.ts; docs/capacity.md).
 */
import { loadStack } from "../../../infra/stack/schema.ts";
import { pulumiStacks } from "../../provision/deployed.ts";
import { checkResultsDir, resultsDirFlag } from "../../results/preflight.ts";
import { CAPACITY_DEFAULTS, type CapacityFlags } from "../../runner/capacity-run.ts";
import { DEFAULT_BOUNDS } from "../../runner/capacity.ts";
import { lockWaitMs } from "../../runner/drive.ts";
import { addProgressOptions, positiveInt } from "../../runner/progress.ts";
import { stackNames, type CommandModule } from "../context.ts";

export const registerCapacity: CommandModule = (program, ctx) => {
  const cmd = program
    .command("capacity")
    .summary("Find the highest rate a stack sustains (ramp, then bisection)")
    .description(
      "Find the highest offered rate a stack sustains for an open-loop scenario: steps of real runs, a ramp from --start-rate by --factor until a step fails, then a bisection to --tolerance. A closed loop or a fixed workload is refused (E_CAPACITY_CLOSED_LOOP, exit 2). Exit 0 when a rate was found, 1 when no step sustained, 3 when a step errored. What a step must hold: docs/capacity.md.",
    )
    .argument("<scenario>", "an open-loop scenario, e.g. scenarios/syslog-ng-postgres.yaml")
    .option("-s, --stack <name>", "one stack, e.g. local-quarter-core")
    .option("--stacks <names>", "several stacks: a search each, then their ratio")
    .option("-r, --results <dir>", "results directory", resultsDirFlag, "results")
    .option("--cell <id>", "the matrix cell to search (needed with several), e.g. batch-lines=1000")
    .option("--start-rate <n>", "events/s of the first step (default: the scenario's rate)")
    .option("--factor <x>", `ramp factor between steps until one fails (default ${CAPACITY_DEFAULTS.factor})`)
    .option(
      "--tolerance <x>",
      `stop when first bad − last good ≤ x × last good (default ${CAPACITY_DEFAULTS.tolerance})`,
    )
    .option(
      "--max-steps <n>",
      `steps at most (default ${CAPACITY_DEFAULTS.maxSteps})`,
      positiveInt("--max-steps", {
        n: 100,
        why: "each step is a measured run, and the ramp doubles 1 event/s past 10^9 in 30",
      }),
    )
    .option(
      "--step-duration <d>",
      `each step's measured duration (default ${CAPACITY_DEFAULTS.stepDuration})`,
    )
    .option("--warmup <d>", "each step's warmup (default: the scenario's)")
    .option("--p99-bound <d>", `delivery latency p99 bound (default ${DEFAULT_BOUNDS.p99BoundMs / 1000}s)`)
    .option("--max-lag-slope <x>", `largest lag growth in s/s (default ${DEFAULT_BOUNDS.maxLagSlope})`)
    .option(
      "--min-share <x>",
      `share of the offered rate sent and stored (default ${DEFAULT_BOUNDS.minShare})`,
    )
    .option(
      "--lock-wait <d>",
      "wait this long (e.g. 10m) for a stack another run holds (default: INGESTBENCH_LOCK_WAIT, else 0)",
    );
  addProgressOptions(cmd).action(
    ctx.action(async (scenarioFile: string, flags: CapacityFlags & { stack?: string; stacks?: string }) => {
      const names = stackNames(flags);
      const resultsRoot = checkResultsDir(flags.results);
      const stacks = names.map((s) => loadStack(s, ctx.stacksDir));
      const { capacityCommand } = await import("../../runner/capacity-run.ts");
      return capacityCommand(scenarioFile, flags, {
        projectRoot: ctx.projectRoot,
        resultsRoot,
        stacks,
        lockWaitMs: lockWaitMs(flags.lockWait),
        deployed: pulumiStacks({
          projectRoot: ctx.projectRoot,
          quiet: flags.quiet === true || flags.progress === "quiet",
        }),
      });
    }),
  );
};
