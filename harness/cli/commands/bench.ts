/**
 * `ingestbench bench (--stack S | --stacks A,B,...) SCENARIO`: provision, run the scenario's cells, tear down; with
 * several stacks, print a comparison; with an application under test (scenario `app`), write-up 003's table of its
 * variants (harness/results/across-variants.ts); after a scenario with a `query` phase, write-up 001's query table per
 * stack (ui/query-table.ts). Local stacks are provisioned per run by the runner (harness/runner/drive.ts),
 * docker and azure stacks deployed for their runs and destroyed after them (harness/provision/deployed.ts).
 */
import { loadStack } from "../../../infra/stack/schema.ts";
import {
  compareStacks,
  compareVariants,
  renderComparison,
  renderVariantsComparison,
} from "../../results/compare.ts";
import { terminalWidth } from "../../results/columns.ts";
import { machineText } from "../../results/format.ts";
import { checkResultsDir } from "../../results/preflight.ts";
import { renderQueryTables } from "../../../ui/query-table.ts";
import { pulumiStacks } from "../../provision/deployed.ts";
import { driveRuns, lockWaitMs, runsExitCode } from "../../runner/drive.ts";
import { loadScenarioFile, planCells } from "../../runner/plan.ts";
import { addProgressOptions, addRunOptions, Progress, type ProgressMode } from "../../runner/progress.ts";
import { stackNames, type CommandModule } from "../context.ts";
import { benchTable, benchTableWidth } from "../../../ui/bench-table.ts";

interface BenchFlags {
  stack?: string;
  stacks?: string;
  results: string;
  replicates?: number;
  quiet?: boolean;
  progress?: ProgressMode;
  duration?: string;
  warmup?: string;
  lockWait?: string;
  verbose?: boolean;
  wide?: boolean;
}

export const registerBench: CommandModule = (program, ctx) => {
  const cmd = program
    .command("bench")
    .summary("Run a scenario on one or more stacks; several are compared")
    .description(
      "Provision a stack, run the scenario's cells (warmup, measurement, drain), tear everything down and write results/<stack>/<scenario>/<run-id>/. With --stacks, the stacks run in order and a comparison table ends the output. What each line says: docs/output.md; more: docs/commands.md.",
    )
    .argument("<scenario>", "scenario file, e.g. scenarios/quickstart.yaml")
    .option("-s, --stack <name>", "one stack name (stacks/Pulumi.<name>.yaml), e.g. local-2-cores")
    .option(
      "--stacks <names>",
      "several stack names, comma-separated, run in this order and compared, e.g. local-quarter-core,local-2-cores",
    );
  addRunOptions(cmd, "runs per cell, overriding the scenario's replicates (default 3)");
  cmd.option("--wide", "the table after the runs with every column, not only those that fit 100 columns");
  addProgressOptions(cmd).action(
    ctx.action(async (scenarioFile: string, flags: BenchFlags) => {
      const names = stackNames(flags);
      const resultsRoot = checkResultsDir(flags.results);
      const stacks = names.map((s) => loadStack(s, ctx.stacksDir));
      const scenario = loadScenarioFile(scenarioFile);
      const plans = planCells(scenario, scenarioFile, {
        replicates: flags.replicates,
        duration: flags.duration,
        warmup: flags.warmup,
      });
      const verbose = Boolean(flags.verbose);
      const progress = new Progress(flags.quiet ? "quiet" : flags.progress, undefined, undefined, {
        verbose,
      });
      const result = await driveRuns(
        stacks.map((stack) => ({ stack, plans })),
        {
          resultsRoot,
          invocation: new Date().toISOString(),
          projectRoot: ctx.projectRoot,
          reporter: progress,
          deployed: pulumiStacks({ projectRoot: ctx.projectRoot, quiet: progress.mode === "quiet" }),
          lockWaitMs: lockWaitMs(flags.lockWait),
        },
      );
      // a query phase: write-up 001's query table per stack (and the ingest with and without queries in mixed mode)
      for (const stack of stacks) {
        const text = renderQueryTables(
          `${scenario.name} on ${stack.name}`,
          result.records.filter((r) => r.stack === stack.name),
        );
        if (text) progress.result(`\n${text}`);
      }
      // an interrupted invocation is not compared: its rows would mix the stopped runs with older ones
      const comparable =
        result.records.some((r) => r.summary) && !result.records.some((r) => r.status === "interrupted");
      // a scenario with its own table (a query phase, an application under test) ends with that one on one stack
      const ownTable = Boolean(scenario.query) || Boolean(scenario.app);
      if (comparable && verbose && stacks.length > 1) {
        // the runs just made are what was asked for: show version differences between stacks instead of refusing
        const rows = await compareStacks(
          resultsRoot,
          scenario.name,
          stacks.map((s) => s.name),
          { force: true },
        );
        progress.result(
          `\n${renderComparison(scenario.name, rows, { wide: flags.wide, width: terminalWidth(progress.mode === "jsonl" ? process.stderr : process.stdout) })}`,
        );
      }
      // the default's table (and with --verbose on one stack, the sweep's: today's block printed none)
      const tabled = comparable && (stacks.length > 1 ? !verbose : !ownTable);
      if (tabled) {
        const rows = await compareStacks(
          resultsRoot,
          scenario.name,
          stacks.map((s) => s.name),
          { force: true },
        );
        progress.result(
          `\n${benchTable(scenario.name, rows, { wide: flags.wide, width: benchTableWidth(progress.mode === "jsonl" ? process.stderr : process.stdout) })}`,
        );
      }
      // an application under test: write-up 003's table of its variants, from the runs just made
      if (
        scenario.app &&
        result.records.some((r) => r.app) &&
        !result.records.some((r) => r.status === "interrupted")
      ) {
        for (const stack of stacks) {
          const table = await compareVariants(
            resultsRoot,
            scenario.name,
            stack.name,
            result.records.find((r) => r.stack === stack.name && r.app)?.runId,
          ).catch(() => null);
          if (table) progress.result(`\n${renderVariantsComparison(table)}`);
        }
      }
      // every number names its machine (docs/decisions/0007-every-number-names-its-machine.md): where each stack's runs ran
      // (the default table names the machine in its own line)
      if (verbose || !tabled)
        for (const stack of stacks) {
          const env = result.records.find((r) => r.stack === stack.name)?.environment;
          if (env) progress.result(`measured ${stack.name} on ${machineText(env)}`);
        }
      return runsExitCode(result);
    }),
  );
};
