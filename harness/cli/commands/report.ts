/**
 * `ingestbench report [--out report.html] [--markdown FILE]`: one self-contained HTML report
 * (reportCommand, harness/report/build.ts).
 */
import type { ReportFlags } from "../../report/build.ts";
import { resultsDirFlag } from "../../results/preflight.ts";
import { listFlag, type CommandModule } from "../context.ts";

export const registerReport: CommandModule = (program, ctx) => {
  program
    .command("report")
    .summary("Write an HTML report with charts (and a Markdown summary)")
    .description(
      "Write one self-contained HTML report: per scenario the answer in words, then each host's resources against its caps, a sweep's curve (knee, first saturating cell), throughput, lag, log MiB/s, collector and sink signals over time, storage, cost and ledgers as SVG charts; optionally a Markdown summary for a CI job.",
    )
    .option("-r, --results <dir>", "results directory", resultsDirFlag, ctx.resultsDir)
    .option("--scenario <name>", "only this scenario (default: every scenario found)")
    .option(
      "--stacks <names>",
      "comma-separated stack names, the first is the baseline of ratios (default: every stack with results, in the order their latest runs started)",
    )
    .option("-o, --out <file>", "HTML file to write", "report.html")
    .option("--markdown <file>", 'also write a Markdown summary (e.g. "$GITHUB_STEP_SUMMARY")')
    .action(
      ctx.action(async (flags: ReportFlags) => {
        if (flags.stacks !== undefined) listFlag("--stacks", flags.stacks, "stack");
        // loaded on use: Vega is not needed by the other commands
        const { reportCommand } = await import("../../report/build.ts");
        ctx.print(await reportCommand(flags));
      }),
    );
};
