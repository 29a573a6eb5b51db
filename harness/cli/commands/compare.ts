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
    .description(
      "Compare a scenario's results. Across stacks (--stacks; hardware sizes; latest results of each): median rows/s and MiB/s with IQR and CV (erratic when noisy), ratio to the first stack with a 90 % bootstrap interval, rows/s per vCPU and per GiB, CPU, throttling, network, lag, bottleneck, ledger. Across runs on one stack (--stack, --baseline, --contender): the same per cell. Environment differences are listed; mismatched component versions are refused unless --force. Across scenarios (--scenarios A,B with --stack S for all, or --stacks S1,S2 one per scenario; e.g. --scenarios elasticsearch-bulk-8000,elasticsearch-bulk-8000-postgres --stack docker-quarter-core): each side's latest complete invocation, per matched cell the median rows/s (or, with --metric queries, the query phase's queries/s per query cell) and the ratio to the first side with a 90 % bootstrap interval; all sides must share one machine (runs on another are excluded); a component both sides run at different versions is refused unless --force. Only runs that are ok, with caps enforced on every host and on the group's machine, count; the others are listed below the table (and in --json) as excluded, with their reasons.",
    )
    .option("--scenario <name>", "scenario name, e.g. quickstart (across stacks or runs)")
    .option(
      "--scenarios <names>",
      "across scenarios: comma-separated scenario names or files (scenarios/a.yaml,b); the first is the baseline",
    )
    .option(
      "--metric <rows|queries>",
      "rows (ingest rows/s, default) or queries (the query phase's queries/s per query cell); with --scenarios, or with --scenario and --stacks A,B",
    )
    .option("--stacks <names>", "comma-separated stack names; the first is the baseline")
    .option("-s, --stack <name>", "one stack (across runs, with --baseline)")
    .option("-r, --results <dir>", "results directory", resultsDirFlag, ctx.resultsDir)
    .option(
      "--baseline <invocation-or-run-id-prefix>",
      "across runs: the baseline runs (run id or invocation prefix, latest, previous)",
    )
    .addOption(
      new Option(
        "--contender <invocation-or-run-id-prefix>",
        "across runs: runs compared with the baseline; repeat or comma-separate",
      )
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "latest"),
    )
    .option(
      "--variants",
      "the variants of an application under test (scenario `app`) on one stack, write-up 003's table: throughput, mean, p50/p99, CPU per host, records, bytes, dropped, elapsed, each with its ratio to the first variant; --baseline picks the invocation (default: the latest)",
    )
    .option("--force", "compare even when component versions differ (the differences are listed)")
    .option("--json", "print the comparison as JSON (only that on stdout)")
    .option(
      "--wide",
      "across stacks: every column in the terminal table (the default shows about a dozen, fitted to COLUMNS, else the terminal's width, else 120 characters; the rest are named below it)",
    )
    .option(
      "--columns <names>",
      "across stacks: the terminal table's columns, comma-separated keys or headers, e.g. rows/s,cv,sinkCores,lagP99Ms (stack first)",
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
