/**
 * The `ingestbench` command line (commander). Only this module turns typed errors into exit codes:
 * ConfigurationError 2, ProvisioningError 3, VerificationError 4, failed checks 1, interrupted 130/143.
 *
 * Commands come from command modules (`CommandModule`: a function that adds commands to the program); a module
 * registers its commands with one line in COMMAND_MODULES below.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { collectLeftovers } from "../infra/local/gc.ts";
import { listStacks, loadPulumiStack, loadStack } from "../infra/stack/schema.ts";
import { ConfigurationError, IngestbenchError } from "../core/errors.ts";
import { prepareResultsDir } from "./results/preflight.ts";
import { compareCommand, compareStacks, renderComparison, type CompareCommandFlags } from "./results/compare.ts";
import { registerNightlyCommands } from "./nightly/commands.ts";
import { pulumiStacks, registerProvisionCommands } from "./provision/commands.ts";
import type { ReportFlags } from "./report/build.ts";
import { loadScenarioFile, planCells } from "./runner/plan.ts";
import { driveRuns, runsExitCode } from "./runner/drive.ts";
import { addProgressOptions, addRunOptions, Progress, type ProgressMode } from "./runner/progress.ts";
import type { CellPlan } from "./runner/run.ts";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { version: string }).version;
}

/** A stack file has a top-level `config:` map (Pulumi stack settings); anything else is taken as a scenario. */
function isStackFile(file: string): boolean {
  try {
    return /^config:/m.test(readFileSync(file, "utf8"));
  } catch {
    return path.basename(file).startsWith("Pulumi.");
  }
}

/** What a command module gets from the CLI. */
export interface CliContext {
  /** the repository root (stacks/, package.json) */
  projectRoot: string;
}

/** A command module: adds its commands (and their options and actions) to the program. */
export type CommandModule = (program: Command, ctx: CliContext) => void;

interface BenchFlags {
  stack: string;
  results: string;
  replicates?: number;
  quiet?: boolean;
  progress?: ProgressMode;
  duration?: string;
  warmup?: string;
}

async function bench(scenarioFile: string, flags: BenchFlags): Promise<number> {
  const resultsRoot = prepareResultsDir(flags.results);
  const stacks = flags.stack.split(",").map((s) => s.trim()).filter(Boolean).map((s) => loadStack(s, path.join(projectRoot, "stacks")));
  const scenario = loadScenarioFile(scenarioFile);
  const plans: CellPlan[] = planCells(scenario, scenarioFile, { replicates: flags.replicates, duration: flags.duration, warmup: flags.warmup });
  const progress = new Progress(flags.quiet ? "quiet" : flags.progress);
  // docker and azure stacks are deployed with Pulumi for their runs and destroyed after them (harness/provision/)
  const result = await driveRuns(stacks.map((stack) => ({ stack, plans })), {
    resultsRoot, invocation: new Date().toISOString(), projectRoot, reporter: progress, deployed: pulumiStacks({ projectRoot, quiet: progress.mode === "quiet" }),
  });
  // an interrupted invocation is not compared: its rows would mix the stopped runs with older ones
  if (stacks.length > 1 && result.records.some((r) => r.summary) && !result.records.some((r) => r.status === "interrupted")) {
    // the runs just made are what was asked for: show version differences between stacks instead of refusing
    const rows = await compareStacks(resultsRoot, scenario.name, stacks.map((s) => s.name), { force: true });
    progress.result(`\n${renderComparison(scenario.name, rows)}`);
  }
  return runsExitCode(result);
}

/** bench: provision, run, tear down. */
const registerBenchCommand: CommandModule = (program) => {
  const cmd = program.command("bench")
    .description("Provision a stack, run a scenario's cells (warmup, measurement, drain), tear everything down, write results/<stack>/<scenario>/<run-id>/. Local stacks are provisioned per run (cgroups, network namespaces, tc); docker and azure stacks are deployed with Pulumi for their runs and destroyed after them. With several stacks, print a comparison.")
    .argument("<scenario>", "scenario file, e.g. scenarios/quickstart.yaml")
    .requiredOption("-s, --stack <names>", "stack name(s), comma-separated (stacks/Pulumi.<name>.yaml), e.g. local-quarter-core,local-2-cores");
  addRunOptions(cmd, "runs per cell, overriding the scenario's replicates (default 3)");
  addProgressOptions(cmd)
    .action(async (scenario: string, flags: BenchFlags) => { process.exitCode = await bench(scenario, flags); });
};

/**
 * The command modules, in help order before the result commands defined in program(). Register a module's commands
 * here, one line each.
 */
const COMMAND_MODULES: CommandModule[] = [
  registerBenchCommand,
  registerNightlyCommands,
];

/** Modules that extend commands defined in program() (provisioning adds Pulumi stacks to `gc`): registered last. */
const LATE_COMMAND_MODULES: CommandModule[] = [
  (cmd, ctx) => registerProvisionCommands(cmd, ctx.projectRoot),
];

/** Build the program (exported for tests of --help and argument errors). */
export function program(): Command {
  const cmd = new Command("ingestbench")
    .description("Benchmark log and event ingest pipelines (collector → database) on capped hardware, and count what the database really kept.")
    .version(packageVersion(), "-V, --version")
    .showHelpAfterError()
    // usage errors (unknown command or option, missing argument) are configuration errors: exit 2, not 1
    .exitOverride((err) => {
      process.exit(err.exitCode === 0 ? 0 : 2);
    });

  for (const register of COMMAND_MODULES) register(cmd, { projectRoot });

  cmd.command("compare")
    .description("Compare a scenario's results. Across stacks (hardware sizes; latest results of each): median rows/s and MiB/s with IQR and CV (erratic when noisy), ratio to the first stack with a 90 % bootstrap interval, rows/s per vCPU and per GiB, CPU, throttling, network, lag, bottleneck, ledger. Across runs on one stack (--baseline, --contender): the same per cell. Environment differences are listed; mismatched component versions are refused unless --force.")
    .requiredOption("--scenario <name>", "scenario name, e.g. quickstart")
    .requiredOption("--stacks <names>", "comma-separated stack names; the first is the baseline (one stack with --baseline)")
    .option("-r, --results <dir>", "results directory", "results")
    .option("--baseline <invocation-or-run-id-prefix>", "across runs: the baseline runs (run id or invocation prefix, latest, previous)")
    .addOption(new Option("--contender <invocation-or-run-id-prefix>", "across runs: runs compared with the baseline; repeat or comma-separate")
      .argParser((v: string, prev: string[]) => [...prev, v]).default([] as string[], "latest"))
    .option("--force", "compare even when component versions differ (the differences are listed)")
    .option("--json", "machine-readable output (JSON)")
    .action(async (flags: CompareCommandFlags & { results: string }) => {
      process.stdout.write(`${await compareCommand(path.resolve(flags.results), flags)}\n`);
    });

  const results = cmd.command("results").description("Work with results on disk (results/<stack>/<scenario>/<run-id>/).");
  results.command("query")
    .description("Run SQL with DuckDB over the results' JSON files: view `runs` (one row per run.json: stack, scenario, cell, status, summary.rowsPerSecond, ledger.lost, limits.sink.applied.cfsQuotaUs, ..., dir) and view `series` (one row per series.jsonl line: stack, scenario, runId, elapsedS, phase, rowsPerSec, lagMs, hosts.sink.cpuCores, ...).")
    .argument("<sql>", "e.g. \"SELECT stack, summary.rowsPerSecond FROM runs ORDER BY 2\"")
    .option("-r, --results <dir>", "results directory", "results")
    .option("--json", "print the rows as a JSON array")
    .action(async (sql: string, flags: { results: string; json?: boolean }) => {
      // loaded on use: the DuckDB native binding and Vega are not needed by the other commands
      const { queryResults, renderQueryResult } = await import("./results/query.ts");
      const result = await queryResults(path.resolve(flags.results), sql);
      for (const f of result.skipped) process.stderr.write(`ingestbench: skipped unreadable ${f}\n`);
      process.stdout.write(`${flags.json ? JSON.stringify(result.rows, null, 2) : renderQueryResult(result)}\n`);
    });

  cmd.command("report")
    .description("Write one self-contained HTML report with SVG charts rendered at build time (Vega-Lite): throughput per stack (against the swept parameter with a matrix), throughput and ingest lag over time per run, sink CPU, throttling and IO over time, ledger bars; optionally a Markdown summary for a CI job summary.")
    .option("-r, --results <dir>", "results directory", "results")
    .option("--scenario <name>", "only this scenario (default: every scenario found)")
    .option("--stacks <names>", "comma-separated stack names, the first is the baseline of ratios (default: every stack with results, in the order their latest runs started)")
    .option("-o, --out <file>", "HTML file to write", "report.html")
    .option("--markdown <file>", "also write a Markdown summary (e.g. \"$GITHUB_STEP_SUMMARY\")")
    .action(async (flags: ReportFlags) => {
      const { reportCommand } = await import("./report/build.ts");
      process.stdout.write(`${await reportCommand(flags)}\n`);
    });

  cmd.command("gc")
    .description("Remove leftovers of killed runs: processes, cgroups, network namespaces, tmpfs mounts and temp directories whose owner is gone.")
    .option("--all", "also remove ownerless run directories younger than the 4 h expiry (runs whose owner is alive are still left alone)")
    .option("--kill-live", "also remove runs whose owner process is still alive: stops benchmarks running in other terminals")
    .action(async (flags: { all?: boolean; killLive?: boolean }) => {
      const report = await collectLeftovers({ all: Boolean(flags.all), includeLive: Boolean(flags.killLive) });
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    });

  cmd.command("validate")
    .description("Validate stack and scenario files (a file with a top-level `config:` is a stack); errors name the file, line and field. Checks every file and exits 2 if any is wrong.")
    .argument("<files...>", "stacks/Pulumi.<name>.yaml or scenario files")
    .action((files: string[]) => {
      let bad = 0;
      for (const f of files) {
        try {
          if (isStackFile(f)) loadStack(f);
          else planCells(loadScenarioFile(f), f);
          process.stdout.write(`${f}: ok\n`);
        } catch (err) {
          if (!(err instanceof IngestbenchError)) throw err;
          process.stderr.write(`${err.message}\n`);
          bad++;
        }
      }
      if (bad > 0) process.exitCode = 2;
    });

  cmd.command("stacks")
    .description("List the stacks in stacks/ with their platform and host limits (azure: each host's VM size too); a broken stack file is reported, the others listed, and the exit code is 2.")
    .action(() => {
      for (const name of listStacks(path.join(projectRoot, "stacks"))) {
        try {
          const s = loadStack(name, path.join(projectRoot, "stacks"));
          // an azure host's hardware is its VM size (with the caps in its stack file on top)
          const vmSizes = s.platform === "azure" ? loadPulumiStack(name, path.join(projectRoot, "stacks")).platform.azure?.vmSizes ?? {} : {};
          const hosts = Object.values(s.hosts).map((h) => `${h.name}${vmSizes[h.name] ? ` ${vmSizes[h.name]}` : ""} ${JSON.stringify(h.requested)}`).join("; ");
          process.stdout.write(`${name} (${s.platform}): ${hosts}\n`);
        } catch (err) {
          if (!(err instanceof IngestbenchError)) throw err;
          process.stdout.write(`${name}: INVALID (${err.message.split("\n")[0]})\n`);
          process.exitCode = 2;
        }
      }
    });
  for (const register of LATE_COMMAND_MODULES) register(cmd, { projectRoot });
  return cmd;
}

/**
 * Under `npm run` (npm sets npm_lifecycle_event) a signal sent to npm alone does not reach this process: npm exits on
 * SIGTERM and leaves it running without a parent, and waits on SIGINT. Once the parent is gone, stop as on SIGTERM
 * (tear down, keep what was measured, exit 143), so that a supervisor killing `npm run bench` leaves nothing behind.
 */
function stopWhenNpmIsGone(): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.stderr.write("ingestbench: npm, which started this process, is gone: stopping as on SIGTERM\n");
    process.kill(process.pid, "SIGTERM");
  }, 500);
  timer.unref();
}

/** CLI entry: parse argv, run, map typed errors to exit codes. */
export async function main(argv: string[]): Promise<void> {
  stopWhenNpmIsGone();
  // a closed pipe (`ingestbench bench ... | head`) must not kill the harness mid-run: the run goes on, tears down and
  // writes its results; only the printing is lost
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => { if (err.code !== "EPIPE") throw err; });
  }
  try {
    await program().parseAsync(argv);
  } catch (err) {
    if (err instanceof IngestbenchError) {
      process.stderr.write(`ingestbench: ${err.message}\n`);
      process.exitCode = err.exitCode;
    } else {
      process.stderr.write(`ingestbench: unexpected error: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    }
  }
}
