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
    .description(
      "A/A run: make every run of a scenario on one stack twice (groups A and B, back to back in the seeded shuffled order), compare B with A per cell as `compare` does, and store the noise floor per cell (max of the 90 % interval's half-width and |ratio − 1|) in results/<stack>/<scenario>.aa/noise-floor.json; `compare` and `nightly` then call a change only beyond it. The runs are stored under results/<stack>/<scenario>.aa/.",
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
