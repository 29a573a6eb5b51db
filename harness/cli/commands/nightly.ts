/**
 * `ingestbench nightly PLAN [--json] [--out FILE] [--markdown FILE]`: run a nightly plan and decide on regressions
 * (nightlyCommand, harness/nightly/run.ts). --json prints the decision on stdout (the run results and the summary
 * then go to stderr); --out writes it to a file (default nightly.json).
 */
import type { NightlyFlags } from "../../nightly/run.ts";
import { addProgressOptions, addRunOptions } from "../../runner/progress.ts";
import type { CommandModule } from "../context.ts";

export const registerNightly: CommandModule = (program, ctx) => {
  const cmd = program.command("nightly")
    .description("Run a nightly plan (stacks × scenarios, each as `bench` does, in one invocation), then per stack and scenario compare the latest invocation with the previous one per cell (as `compare --baseline previous --contender latest`). A cell is a regression when it is significantly slower: 90 % interval below 1, at least 5 % slower, at least 3 measured runs per night (fewer is \"inconclusive\"), and beyond the stack's A/A noise floor when `ingestbench aa` measured one. Prints a summary, writes the decision as JSON to --out (nightly.json) and, with --json, to stdout; exits 1 naming the regressed cells, 0 when there is none or no previous night.")
    .argument("<plan>", "plan file, e.g. nightly/local.yaml (entries: [{ stack, scenario, replicates?, duration?, warmup? }])");
  addRunOptions(cmd, "override every entry's replicates", false)
    .option("--stacks-dir <dir>", "read stack files from this directory instead of stacks/ (e.g. a copy with other caps)")
    .option("--force", "compare even when component versions differ from the previous night (the differences are listed)")
    .option("--json", "print the decision as JSON on stdout (only that; the run results and the summary go to stderr)")
    .option("-o, --out <file>", "where to write the decision as JSON", "nightly.json")
    .option("--markdown <file>", "also write a Markdown summary (e.g. \"$GITHUB_STEP_SUMMARY\")");
  addProgressOptions(cmd)
    .action(ctx.action(async (plan: string, flags: NightlyFlags) => {
      // loaded on use, as `aa`: the other commands do not pay for the nightly modules
      const { nightlyCommand } = await import("../../nightly/run.ts");
      return nightlyCommand(plan, flags, ctx.projectRoot);
    }));
};
