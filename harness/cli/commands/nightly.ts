/**
 * `ingestbench nightly PLAN [--json] [--out FILE] [--markdown FILE]`: run a nightly plan and decide on regressions
 * (nightlyCommand, harness/nightly/run.ts). --json prints the decision on stdout (the run results and the summary
 * then go to stderr); --out writes it to a file (default nightly.json).
 */
import type { NightlyFlags } from "../../nightly/run.ts";
import { addProgressOptions, addRunOptions, positiveInt } from "../../runner/progress.ts";
import type { CommandModule } from "../context.ts";

export const registerNightly: CommandModule = (program, ctx) => {
  const cmd = program
    .command("nightly")
    .description(
      "Run a nightly plan (stacks × scenarios, each as `bench` does, in one invocation), then per stack, scenario and cell test tonight against a baseline of the previous K good nights (default 7; plan `window:` or --window) in the same environment (CPU model, kernel, cores, component versions): with 3 or more baseline nights, tonight's median as a new draw from the nights' distribution (Student t prediction test on log rows/s, floor = the largest deviation of a good night from the others); with 1–2 nights, the pooled runs with an exact rank-sum test (at least 3 runs a night). A cell is a regression when its Holm-adjusted one-sided p-value is ≤ 0.05 over every cell tested tonight, it is at least 5 % slower and beyond the floor. Regression nights never enter a later baseline; runs not ok, with caps not enforced or on another environment are left out and listed; drift over the window (Mann–Kendall, Theil–Sen) is reported. Exits 1 naming the regressed cells, 2 when history was required (--require-history) and a pair has no earlier night, 0 otherwise.",
    )
    .argument(
      "<plan>",
      "plan file, e.g. nightly/local.yaml (entries: [{ stack, scenario, replicates?, duration?, warmup? }])",
    );
  addRunOptions(cmd, "override every entry's replicates", false)
    .option(
      "--stacks-dir <dir>",
      "read stack files from this directory instead of stacks/ (e.g. a copy with other caps)",
    )
    .option(
      "--force",
      "use baseline nights of any environment (CPU model, kernel, cores, component versions; the differences are listed)",
    )
    .option(
      "--window <K>",
      "baseline nights per cell, overriding the plan's window (default 7)",
      positiveInt("--window"),
    )
    .option(
      "--require-history",
      "fail (exit 2, E_NIGHTLY_HISTORY) when a stack and scenario has no earlier night: set it where results are restored from a durable history; leave it out to bootstrap the first night",
    )
    .option(
      "--json",
      "print the decision as JSON on stdout (only that; the run results and the summary go to stderr)",
    )
    .option("-o, --out <file>", "where to write the decision as JSON", "nightly.json")
    .option("--markdown <file>", 'also write a Markdown summary (e.g. "$GITHUB_STEP_SUMMARY")');
  addProgressOptions(cmd).action(
    ctx.action(async (plan: string, flags: NightlyFlags) => {
      // loaded on use, as `aa`: the other commands do not pay for the nightly modules
      const { nightlyCommand } = await import("../../nightly/run.ts");
      return nightlyCommand(plan, flags, ctx.projectRoot);
    }),
  );
};
