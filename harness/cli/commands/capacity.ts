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
    .description(
      "Find the highest offered rate a stack sustains for a scenario with an open-loop generator (a `rate` in events/s): " +
        "steps of real runs (as `bench` makes them), a ramp from --start-rate multiplying by --factor until a step fails, then a bisection of " +
        "[last good, first bad] until it is within --tolerance, at most --max-steps steps. A step sustains its rate when nothing is lost or " +
        `rejected, at least --min-share of the offered rate is sent and stored, delivery latency p99 (stored_at − sent_at; the lag's p99 where the sink has none) is at most --p99-bound, the ingest lag's Theil–Sen slope over the measurement is at most --max-lag-slope seconds per second, and the saturation verdict is steady. ` +
        "Prints each step as it ends, then the curve (offered, sent, stored, p99 per step), the sustainable rate with its interval and what bound the step where it broke; " +
        "stores it in results/<stack>/<scenario>.capacity/capacity.json beside the steps' runs. With --stacks, one search per stack and the capacity ratio to the first. " +
        "A closed-loop scenario (rate: max) or a fixed workload (requests) is refused: E_CAPACITY_CLOSED_LOOP, exit 2. Exit 0 when a rate was found, 1 when no step sustained, 3 when a step errored, 130/143 interrupted. See docs/capacity.md.",
    )
    .argument(
      "<scenario>",
      "scenario file with an open-loop generator, e.g. scenarios/syslog-ng-postgres.yaml",
    )
    .option("-s, --stack <name>", "one stack name (stacks/Pulumi.<name>.yaml), e.g. local-quarter-core")
    .option(
      "--stacks <names>",
      "several stack names, comma-separated: one search each, in this order, then the capacity ratio to the first",
    )
    .option("-r, --results <dir>", "results directory", resultsDirFlag, "results")
    .option(
      "--cell <id>",
      "the matrix cell to search (required when the scenario has several), e.g. batch-lines=1000",
    )
    .option(
      "--start-rate <n>",
      "events/s of the first step, as the generator's rate (default: the scenario's rate)",
    )
    .option("--factor <x>", `ramp factor between steps until one fails (default ${CAPACITY_DEFAULTS.factor})`)
    .option(
      "--tolerance <x>",
      `stop when (first bad − last good) ≤ x × last good (default ${CAPACITY_DEFAULTS.tolerance}, i.e. 10 %)`,
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
      `each step's measured duration, at least 5 sampling intervals (default ${CAPACITY_DEFAULTS.stepDuration})`,
    )
    .option("--warmup <d>", "each step's warmup (default: the scenario's)")
    .option("--p99-bound <d>", `delivery latency p99 bound (default ${DEFAULT_BOUNDS.p99BoundMs / 1000}s)`)
    .option(
      "--max-lag-slope <x>",
      `largest ingest lag growth, seconds per second (default ${DEFAULT_BOUNDS.maxLagSlope}: 5 % overload)`,
    )
    .option(
      "--min-share <x>",
      `share of the offered rate that must be sent and stored (default ${DEFAULT_BOUNDS.minShare})`,
    )
    .option(
      "--lock-wait <d>",
      "when another run holds a stack, wait this long for it (e.g. 10m) instead of refusing (default: INGESTBENCH_LOCK_WAIT, else 0)",
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
