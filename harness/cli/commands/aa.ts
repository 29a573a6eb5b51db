/**
 * `ingestbench aa --stack S SCENARIO`: an A/A invocation that stores the stack's noise floor per cell
 * (aaCommand, harness/nightly/aa.ts).
 */
import type { AaFlags } from "../../nightly/aa.ts";
import { addProgressOptions, addRunOptions } from "../../runner/progress.ts";
import type { CommandModule } from "../context.ts";

export const registerAa: CommandModule = (program, ctx) => {
  const cmd = program
    .command("aa")
    .summary("Run every run twice (A/A) and store the noise floor per cell")
    .description(
      "Make every run of a scenario on one stack twice (groups A and B), compare B with A per cell and store the noise floor in results/<stack>/<scenario>.aa/noise-floor.json; `compare` and `nightly` then call a change only beyond it. How: docs/statistics.md.",
    )
    .argument("<scenario>", "scenario file, e.g. scenarios/quickstart.yaml")
    .requiredOption("-s, --stack <name>", "one stack name (stacks/Pulumi.<name>.yaml)");
  addRunOptions(
    cmd,
    "runs per cell and group, overriding the scenario's replicates (3 or more for a floor that holds)",
  )
    .option("--stacks-dir <dir>", "read stack files from this directory instead of stacks/")
    .option("--force", "compare the groups even when component versions differ between them");
  addProgressOptions(cmd).action(
    ctx.action(async (scenario: string, flags: AaFlags) => {
      const { aaCommand } = await import("../../nightly/aa.ts");
      return aaCommand(scenario, flags, ctx.projectRoot);
    }),
  );
};
