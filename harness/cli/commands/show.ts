/**
 * `ingestbench show <run>`: a run in full from its run.json (ui/show.ts): what `bench --verbose` prints as the run
 * ends, for any run under the results directory, old ones included.
 */
import path from "node:path";
import { resultsDirFlag } from "../../results/preflight.ts";
import { showRun } from "../../../ui/show.ts";
import type { CommandModule } from "../context.ts";

export const registerShow: CommandModule = (program, ctx) => {
  program
    .command("show")
    .description("Print one run in full from its run.json (as bench --verbose)")
    .argument(
      "<run>",
      "a run id (20261205T091714Z-aee9c2), the short id a run line ends with (aee9c2), or a prefix",
    )
    .option("-r, --results <dir>", "results directory", resultsDirFlag, ctx.resultsDir)
    .action(
      ctx.action(async (run: string, flags: { results: string }) => {
        ctx.print(await showRun(path.resolve(flags.results), run));
      }),
    );
};
