/**
 * `ingestbench run --stack S SCENARIO`: run a scenario on a docker or azure stack that is up (`ingestbench up`) and
 * leave it up (benchOnPulumiStack with `keep`, harness/provision/deployed.ts).
 */
import { checkResultsDir } from "../../results/preflight.ts";
import { benchOnPulumiStack, loadDeployableStack } from "../../provision/deployed.ts";
import { lockWaitMs, runsExitCode } from "../../runner/drive.ts";
import { loadScenarioFile, planCells } from "../../runner/plan.ts";
import { addProgressOptions, addRunOptions, Progress, type ProgressMode } from "../../runner/progress.ts";
import type { CommandModule } from "../context.ts";

interface RunFlags {
  stack: string;
  results: string;
  replicates?: number;
  duration?: string;
  warmup?: string;
  lockWait?: string;
  quiet?: boolean;
  verbose?: boolean;
  progress?: ProgressMode;
}

export const registerRun: CommandModule = (program, ctx) => {
  const cmd = program
    .command("run")
    .summary("Run a scenario on a deployed stack, leaving it up")
    .description(
      "Run a scenario on a docker or azure stack that is up (`ingestbench up`) and leave it up; results as `bench` writes them. More: docs/deployed-stacks.md.",
    )
    .argument("<scenario>", "scenario file")
    .requiredOption("-s, --stack <name>", "stack name, e.g. docker-4c4g");
  addRunOptions(cmd, "runs per cell, overriding the scenario's replicates (default 3)");
  addProgressOptions(cmd).action(
    ctx.action(async (scenarioFile: string, flags: RunFlags) => {
      const stack = loadDeployableStack(flags.stack, ctx.projectRoot);
      const resultsRoot = checkResultsDir(flags.results);
      const plans = planCells(loadScenarioFile(scenarioFile), scenarioFile, {
        replicates: flags.replicates,
        duration: flags.duration,
        warmup: flags.warmup,
      });
      const reporter = new Progress(flags.quiet ? "quiet" : flags.progress, undefined, undefined, {
        verbose: flags.verbose,
      });
      const result = await benchOnPulumiStack({
        stack,
        plans,
        resultsRoot,
        invocation: new Date().toISOString(),
        projectRoot: ctx.projectRoot,
        quiet: reporter.mode === "quiet",
        reporter,
        keep: true,
        lockWaitMs: lockWaitMs(flags.lockWait),
      });
      return runsExitCode(result);
    }),
  );
};
