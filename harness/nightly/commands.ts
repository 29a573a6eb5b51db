/**
 * The `nightly` and `aa` commands, registered on the program by harness/cli.ts (`registerNightlyCommands`).
 * Their modules are loaded on use, so the other commands do not pay for them.
 */
import type { Command } from "commander";
import type { CliContext } from "../cli.ts";
import { addProgressOptions, addRunOptions } from "../runner/progress.ts";

export function registerNightlyCommands(program: Command, ctx: CliContext): void {
  const nightly = program.command("nightly")
    .description("Run a nightly plan (stacks × scenarios, each as `bench` does, in one invocation), then per stack and scenario compare the latest invocation with the previous one per cell (as `compare --baseline previous --contender latest`). A cell is a regression when it is significantly slower: 90 % interval below 1, at least 5 % slower, at least 3 measured runs per night (fewer is \"inconclusive\"), and beyond the stack's A/A noise floor when `ingestbench aa` measured one. Prints a summary, writes nightly.json; exits 1 naming the regressed cells, 0 when there is none or no previous night.")
    .argument("<plan>", "plan file, e.g. nightly/local.yaml (entries: [{ stack, scenario, replicates?, duration?, warmup? }])");
  addRunOptions(nightly, "override every entry's replicates", false)
    .option("--stacks-dir <dir>", "read stack files from this directory instead of stacks/ (e.g. a copy with other caps)")
    .option("--force", "compare even when component versions differ from the previous night (the differences are listed)")
    .option("--json <file>", "where to write the decision as JSON", "nightly.json")
    .option("--markdown <file>", "also write a Markdown summary (e.g. \"$GITHUB_STEP_SUMMARY\")");
  addProgressOptions(nightly)
    .action(async (plan: string, flags) => {
      const { nightlyCommand } = await import("./run.ts");
      process.exitCode = await nightlyCommand(plan, flags, ctx.projectRoot);
    });

  const aa = program.command("aa")
    .description("A/A run: make every run of a scenario on one stack twice (groups A and B, back to back in the seeded shuffled order), compare B with A per cell as `compare` does, and store the noise floor per cell (max of the 90 % interval's half-width and |ratio − 1|) in results/<stack>/<scenario>.aa/noise-floor.json; `compare` and `nightly` then call a change only beyond it. The runs are stored under results/<stack>/<scenario>.aa/.")
    .argument("<scenario>", "scenario file, e.g. scenarios/quickstart.yaml")
    .requiredOption("-s, --stack <name>", "one stack name (stacks/Pulumi.<name>.yaml)");
  addRunOptions(aa, "runs per cell and group, overriding the scenario's replicates (3 or more for a floor that holds)")
    .option("--stacks-dir <dir>", "read stack files from this directory instead of stacks/")
    .option("--force", "compare the groups even when component versions differ between them");
  addProgressOptions(aa)
    .action(async (scenario: string, flags) => {
      const { aaCommand } = await import("./aa.ts");
      process.exitCode = await aaCommand(scenario, flags, ctx.projectRoot);
    });
}
