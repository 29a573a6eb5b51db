/**
 * `ingestbench nightly PLAN [--json] [--out FILE] [--markdown FILE]`: run a nightly plan and decide on regressions
 * (nightlyCommand, harness/nightly/command.ts). --json prints the decision on stdout (the run results and the summary
 * then go to stderr); --out writes it to a file (default nightly.json).
 */
import type { NightlyFlags } from "../../nightly/command.ts";
import { addProgressOptions, addRunOptions, positiveInt } from "../../runner/progress.ts";
import type { CommandModule } from "../context.ts";

export const registerNightly: CommandModule = (program, ctx) => {
  const cmd = program
    .command("nightly")
    .summary("Run a nightly plan and flag cells slower than earlier nights")
    .description(
      "Run a plan of stacks × scenarios as `bench` does, then test each cell against the previous good nights in the same environment. Exit 1 naming the regressed cells, 2 with --require-history when a stack and scenario has no earlier night, else 0. The tests, the Holm adjustment and the drift report: docs/statistics.md.",
    )
    .argument("<plan>", "plan file, e.g. nightly/local.yaml");
  addRunOptions(cmd, "override every entry's replicates", false)
    .option("--stacks-dir <dir>", "read stack files from this directory instead of stacks/")
    .option("--force", "use baseline nights of any environment (the differences are listed)")
    .option(
      "--window <K>",
      "baseline nights per cell, overriding the plan's window (default 7)",
      positiveInt("--window"),
    )
    .option("--require-history", "exit 2 (E_NIGHTLY_HISTORY) when a stack and scenario has no earlier night")
    .option("--json", "print the decision as JSON on stdout (the rest goes to stderr)")
    .option("-o, --out <file>", "where to write the decision as JSON", "nightly.json")
    .option("--markdown <file>", 'also write a Markdown summary (e.g. "$GITHUB_STEP_SUMMARY")');
  addProgressOptions(cmd).action(
    ctx.action(async (plan: string, flags: NightlyFlags) => {
      // loaded on use, as `aa`: the other commands do not pay for the nightly modules
      const { nightlyCommand } = await import("../../nightly/command.ts");
      const outcome = await nightlyCommand(plan, flags, ctx.projectRoot);
      if (outcome.json !== undefined) ctx.stdout.write(outcome.json);
      return outcome.exitCode;
    }),
  );
};
