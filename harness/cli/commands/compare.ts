/**
 * `ingestbench compare --scenario NAME (--stacks A,B,... | --stack S --baseline X [--contender Y])`: across stacks, or
 * across runs on one stack; `ingestbench compare --scenarios A,B (--stack S | --stacks S1,S2) [--metric rows|queries]`:
 * across scenarios (compareCommand, harness/results/compare.ts); a table, or JSON with --json.
 */
import path from "node:path";
import { Option } from "commander";
import { compareCommand, type CompareCommandFlags } from "../../results/compare.ts";
import { terminalWidth } from "../../results/columns.ts";
import { resultsDirFlag } from "../../results/preflight.ts";
import { listFlag, stackNames, type CommandModule } from "../context.ts";

type CompareFlags = Omit<CompareCommandFlags, "stacks"> & {
  stack?: string;
  stacks?: string;
  results: string;
};

export const registerCompare: CommandModule = (program, ctx) => {
  program
    .command("compare")
    .summary("Compare results across stacks, runs, scenarios or variants")
    .description(
      "Compare a scenario's latest results across stacks (--stacks), across runs on one stack (--stack with --baseline), across scenarios (--scenarios) or an application's variants (--variants). Only ok runs with caps enforced count; the rest are listed as excluded. The columns: docs/output.md; the intervals: docs/statistics.md.",
    )
    .option("--scenario <name>", "scenario name, e.g. quickstart")
    .option("--scenarios <names>", "across scenarios: names or files, the first the baseline")
    .option("--cell <id>", "across scenarios: a sweep's cell to compare (default its best)")
    .option(
      "--metric <rows|queries>",
      "rows (ingest rows/s, default) or queries (the query phase's queries/s)",
    )
    .option("--stacks <names>", "comma-separated stack names; the first is the baseline")
    .option("-s, --stack <name>", "one stack (across runs, with --baseline)")
    .option("-r, --results <dir>", "results directory", resultsDirFlag, ctx.resultsDir)
    .option("--baseline <id>", "across runs: the baseline (run id or invocation prefix, latest, previous)")
    .addOption(
      new Option("--contender <id>", "across runs: runs compared with the baseline; repeat or comma-separate")
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "latest"),
    )
    .option("--variants", "an application under test's variants on one stack (write-up 003's table)")
    .option("--force", "compare even when component versions differ (the differences are listed)")
    .option("--json", "print the comparison as JSON (only that on stdout)")
    .option("--wide", "every column (the default table fits the terminal and names the rest)")
    .option("--columns <names>", "the table's columns by key or header, e.g. rows/s,cv,sinkCores")
    .addHelpText(
      "after",
      [
        "\nExamples:",
        "  ingestbench compare --scenario quickstart --stacks local-quarter-core,local-2-cores",
        "  ingestbench compare --scenario quickstart --stack local-2-cores --baseline previous",
        "  ingestbench compare --scenarios syslog-ng-postgres,syslog-ng-clickhouse --stack local-pipeline",
      ].join("\n"),
    )
    .action(
      ctx.action(async (flags: CompareFlags) => {
        const { stack, stacks, results, ...rest } = flags;
        // across scenarios, --stacks is each scenario's stack in order: a stack may be named again there
        const names = stackNames({ stack, stacks }, rest.scenarios !== undefined);
        listFlag("--contender", (rest.contender ?? []).join(","), "contender");
        const text = await compareCommand(path.resolve(results), {
          ...rest,
          stacks: names.join(","),
          width: terminalWidth(),
        });
        ctx.print(text);
      }),
    );
};
