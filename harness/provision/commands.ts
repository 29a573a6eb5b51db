/**
 * The commands of docker and azure stacks (deployed with Pulumi's Automation API, ./provisioner.ts):
 *
 *   ingestbench up    --stack S [--scenario F [--cell C]]   deploy S (with a scenario cell's components); it stays up
 *   ingestbench run   --stack S SCENARIO                    run a scenario on S, which stays up afterwards
 *   ingestbench down  --stack S [--cancel]                  destroy S (--cancel: first release a stale lock)
 *   ingestbench gc    [--all] [--dry-run]                   local leftovers, plus Pulumi stacks past their expiry
 *   ingestbench bench --stack S SCENARIO                    up → run → down, destroyed on success, error and Ctrl-C
 *                                                           (benchOnPulumiStack, called by the bench command)
 *
 * Each cell runs as a BenchRun on the deployed stack (harness/remote/site.ts): generators inside the loadgen host's
 * container (docker exec on docker, SSH + docker exec on azure), the verifier from this machine against the sink's
 * published port (docker) or VM address (azure), observers reading each container's cgroup counters. A cell whose
 * components or settings differ from what is deployed is re-deployed in place first (`pulumi up` with the cell's
 * `ingestbench:cell` config).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import type { StackOutputs } from "../../core/outputs.ts";
import type { StackSpec } from "../../core/limits.ts";
import { collectLeftovers } from "../../infra/local/gc.ts";
import { loadPulumiStack, loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { RemoteSite } from "../remote/site.ts";
import { requireShellClient, shellsFor, type ShellSource } from "../remote/hosts.ts";
import { requirePulumiCli } from "./pulumi-cli.ts";
import type { RunRecord } from "../results/types.ts";
import { describeRun, driveRuns, runsExitCode, type DeployedStacks, type DriveResult } from "../runner/drive.ts";
import { loadScenarioFile, planCells } from "../runner/plan.ts";
import { addProgressOptions, addRunOptions, Progress, type ProgressMode } from "../runner/progress.ts";
import type { CellPlan } from "../runner/cell-plan.ts";
import { BenchRun } from "../runner/run.ts";
import { collectExpiredStacks } from "./gc.ts";
import { installInterruptHandlers, interruptedExitCode } from "./interrupt.ts";
import { cellConfig, openWorkspace, PulumiProvisioner, withPulumiStack } from "./provisioner.ts";
import { prepareResultsDir } from "../results/preflight.ts";

const defaultProjectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** What a CellRunner gets: the deployed stack and its outputs, the cell, and where to report. */
export interface CellRunContext {
  stack: StackSpec;
  plan: CellPlan;
  outputs: StackOutputs;
  signal: AbortSignal;
  resultsRoot: string;
  invocation: string;
  projectRoot: string;
  /** the invocation's progress display: the runner reports cellStart and samples; the caller reports cellEnd */
  progress: Progress;
}

/** Runs one cell's load on a deployed stack and returns its record (generators on the loadgen host, verifiers on the sink). */
export type CellRunner = (ctx: CellRunContext) => Promise<RunRecord>;

/**
 * The CellRunner of deployed stacks: a BenchRun on a RemoteSite whose shells come from `source` (the CLIs'
 * environment; on azure the VMs' admin user from the stack file's `ingestbench:azure.adminUsername`).
 */
export function deployedCellRunner(source: ShellSource = {}): CellRunner {
  return async (ctx) => {
    const adminUsername = ctx.stack.platform === "azure" ? loadPulumiStack(ctx.stack.file).platform.azure?.adminUsername : undefined;
    const shell = shellsFor(ctx.outputs, { ...source, ...(adminUsername ? { adminUsername } : {}) });
    const run = new BenchRun({
      stack: ctx.stack, plan: ctx.plan, resultsRoot: ctx.resultsRoot, invocation: ctx.invocation, signal: ctx.signal, projectRoot: ctx.projectRoot,
      site: () => new RemoteSite({ stack: ctx.stack, plan: ctx.plan, outputs: ctx.outputs, shell }),
    });
    const loadgen = ctx.outputs.hosts.loadgen;
    ctx.progress.cellStart(run.runId, `on ${ctx.stack.platform} stack ${ctx.stack.name}${loadgen ? `, generators in ${loadgen.container}` : ""}`);
    run.on("tick", (p, c: { loadEndS: number }) => ctx.progress.sample(p, c));
    return run.run();
  };
}

/** Load a stack and require a Pulumi platform. @throws ConfigurationError E_PLATFORM for local stacks */
export function loadDeployableStack(name: string, projectRoot = defaultProjectRoot): StackSpec {
  const stack = loadStack(name, path.join(projectRoot, "stacks"));
  if (stack.platform === "local") {
    throw new ConfigurationError(
      "E_PLATFORM",
      `stack ${stack.name} is a local stack: it is provisioned per run, not deployed; use \`ingestbench bench --stack ${stack.name} <scenario>\``,
      { location: stack.file, field: "config.ingestbench:platform" },
    );
  }
  return stack;
}

/** Options of pulumiStacks. */
export interface PulumiStacksOptions {
  projectRoot?: string;
  /** no Pulumi progress output */
  quiet?: boolean;
  /** where the `pulumi`, `docker` and `ssh` CLIs are found and what they run with; default process.env */
  env?: NodeJS.ProcessEnv;
  /** runs each cell (default: deployedCellRunner with `env`) */
  runCell?: CellRunner;
  /**
   * `ingestbench run`: the stack is up already and stays up — it is selected, not created, re-deployed in place
   * when a cell needs other components or settings, and never destroyed
   */
  keep?: boolean;
}

/**
 * How the driver (harness/runner/drive.ts) runs docker and azure stacks: per group of consecutive runs on one
 * stack, deploy it with the first cell's components, run every cell (re-deploying in place when a cell needs other
 * components or settings, e.g. another chunk_limit_records), and destroy it after success, error and Ctrl-C (with
 * `keep`: select a stack that is up and leave it up). An interrupted group returns the runs made so far.
 * `check` refuses a local stack, and a cell needing hosts the stack lacks, before anything runs.
 * @throws (run) ProvisioningError when deploying fails (after the destroy)
 */
export function pulumiStacks(opts: PulumiStacksOptions = {}): DeployedStacks {
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  const runCell = opts.runCell ?? deployedCellRunner(opts.env ? { env: opts.env } : {});
  return {
    check(stack, plans) {
      if (stack.platform === "local") throw new ConfigurationError("E_PLATFORM", `stack ${stack.name}: a local stack is provisioned per run, not deployed with Pulumi`);
      for (const plan of plans) cellConfig(stack, plan);
    },
    ready(stack) {
      // the CLIs a deployment and its runs need, before anything is deployed (and paid for)
      const env = opts.env ?? process.env;
      requirePulumiCli(env);
      if (!opts.runCell) requireShellClient(stack.platform, env);
    },
    async run({ stack, items, signal, progress, resultsRoot, invocation }) {
      const records: RunRecord[] = [];
      const configs = items.map(({ plan }) => cellConfig(stack, plan));
      const log = opts.quiet ? undefined : (t: string) => void process.stderr.write(t);
      const popts = { projectDir: projectRoot, ...(opts.env ? { env: opts.env } : {}), ...(log ? { onOutput: log } : {}) };
      // a cell whose stack config differs (components or blocks) is re-deployed
      const key = (i: number) => JSON.stringify(configs[i]);
      let deployed = key(0);
      const cells = async (first: StackOutputs): Promise<void> => {
        let outputs = first;
        for (const [i, item] of items.entries()) {
          if (signal.aborted) break;
          if (key(i) !== deployed) {
            outputs = await provisioner.up({ config: configs[i]!, signal });
            deployed = key(i);
          }
          const record = await runCell({ stack, plan: item.plan, outputs, signal, resultsRoot, invocation: item.invocation ?? invocation, projectRoot, progress });
          progress.cellEnd(record, describeRun(record, resultsRoot));
          records.push(record);
        }
      };
      const provisioner = opts.keep
        ? await PulumiProvisioner.inWorkspace(await openWorkspace(popts), stack.name, popts, "select")
        : await PulumiProvisioner.open(stack.name, popts);
      try {
        if (opts.keep) {
          await provisioner.outputs(); // a stack that is not up is refused ("run `ingestbench up` first"), not deployed here
          await cells(await provisioner.up({ config: configs[0]!, signal }));
        } else {
          await withPulumiStack(provisioner, { config: configs[0]!, signal }, cells);
        }
      } catch (err) {
        if (!signal.aborted) throw err;
      }
      return records;
    },
  };
}

/** Options of benchOnPulumiStack. */
export interface PulumiBenchOptions extends PulumiStacksOptions {
  /** a docker or azure stack */
  stack: StackSpec;
  plans: CellPlan[];
  resultsRoot: string;
  invocation: string;
  /** aborts the bench (besides SIGINT/SIGTERM of this process) */
  signal?: AbortSignal;
  /** the progress display (default: auto, or quiet with `quiet`) */
  reporter?: Progress;
}

/**
 * `ingestbench bench` (or, with `keep`, `run`) of one docker or azure stack: driveRuns with pulumiStacks. Returns
 * what driveRuns returns, for runsExitCode.
 * @throws ConfigurationError for a local stack or a cell needing hosts the stack lacks; ProvisioningError when
 *         deploying fails (after the destroy) or the deployed stack's outputs do not serve the cell
 */
export async function benchOnPulumiStack(opts: PulumiBenchOptions): Promise<DriveResult> {
  const { stack, plans } = opts;
  if (stack.platform === "local") throw new ConfigurationError("E_PLATFORM", `stack ${stack.name}: benchOnPulumiStack is for docker and azure stacks`);
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  return driveRuns([{ stack, plans }], {
    resultsRoot: opts.resultsRoot, invocation: opts.invocation, projectRoot,
    reporter: opts.reporter ?? new Progress(opts.quiet ? "quiet" : undefined),
    deployed: pulumiStacks({ ...opts, projectRoot }),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** Pick one cell of a scenario for `up --scenario`: by id, else the first. @throws ConfigurationError E_CELL */
function pickCell(plans: CellPlan[], file: string, cell: string | undefined): CellPlan {
  const found = cell === undefined ? plans[0] : plans.find((p) => p.cell === cell);
  if (!found) {
    const cells = [...new Set(plans.map((p) => p.cell))];
    throw new ConfigurationError("E_CELL", `${file}: no cell "${cell}"; cells: ${cells.join(", ")}`, { location: file });
  }
  return found;
}

/** Print a deployed stack's outputs in short: hosts with their applied limits, endpoints. */
function describeOutputs(o: StackOutputs): string {
  const lines = [`stack ${o.stack} (${o.platform}) is up`];
  for (const [name, h] of Object.entries(o.hosts)) {
    lines.push(`  ${name}: ${h.component} ${h.image} at ${h.address}; applied ${JSON.stringify(h.limits.applied)}${h.limits.enforced ? "" : `; NOT enforced: ${h.limits.notes.join("; ")}`}`);
  }
  for (const [component, eps] of Object.entries(o.endpoints)) {
    for (const ep of eps) {
      const pub = ep.published.filter((p) => p.external !== null).map((p) => `${p.internal}→${p.ip}:${p.external}`).join(", ");
      lines.push(`  ${component} on ${ep.host}: data ${ep.data ? `${ep.data.host}:${ep.data.port}` : "–"}${ep.metrics ? `, metrics ${ep.metrics.host}:${ep.metrics.port}` : ""}${pub ? `, published ${pub}` : ""}`);
    }
  }
  return lines.join("\n");
}

/** Run an interruptible command body; an interrupted one exits 130/143 instead of failing. */
async function interruptible(fn: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const handle = installInterruptHandlers();
  try {
    await fn(handle.signal);
  } catch (err) {
    if (!handle.signal.aborted) throw err;
    process.stderr.write(`ingestbench: ${(err as Error).message}\n`);
  } finally {
    handle.dispose();
  }
  const sig = handle.interrupted();
  if (sig) process.exitCode = interruptedExitCode(sig);
}

/**
 * Add `up`, `run` and `down` to the program and extend `gc` with Pulumi stacks past their expiry (`--dry-run`
 * lists them). Call after the program's own commands are defined.
 */
export function registerProvisionCommands(program: Command, projectRoot = defaultProjectRoot): void {
  const progress = (quiet?: boolean) => (quiet ? {} : { onOutput: (t: string) => void process.stderr.write(t) });

  program.command("up")
    .description("Deploy a docker or azure stack with Pulumi (Automation API; needs the Pulumi CLI) and leave it up; prints its hosts, applied limits and endpoints. With --scenario, the stack runs that scenario's components (one cell: --cell, else the first). Ctrl-C or a failed deployment destroys what was created.")
    .requiredOption("-s, --stack <name>", "stack name (stacks/Pulumi.<name>.yaml), e.g. docker-4c4g")
    .option("--scenario <file>", "deploy the components of this scenario's cell")
    .option("--cell <id>", "the cell of --scenario, e.g. batch=8000 (default: the first)")
    .option("--json", "print the outputs as JSON")
    .option("-q, --quiet", "no Pulumi progress output")
    .action(async (flags: { stack: string; scenario?: string; cell?: string; json?: boolean; quiet?: boolean }) => {
      const stack = loadDeployableStack(flags.stack, projectRoot);
      let config: ReturnType<typeof cellConfig> | undefined;
      if (flags.scenario) {
        const plan = pickCell(planCells(loadScenarioFile(flags.scenario), flags.scenario), flags.scenario, flags.cell);
        config = cellConfig(stack, plan);
      }
      await interruptible(async (signal) => {
        const p = await PulumiProvisioner.open(stack.name, { projectDir: projectRoot, ...progress(flags.quiet) });
        let outputs: StackOutputs;
        try {
          outputs = await p.up({ ...(config ? { config } : {}), signal });
        } catch (err) {
          process.stderr.write(`ingestbench: deploying ${stack.name} failed; destroying what was created\n`);
          await p.destroy({ cancelStaleLock: signal.aborted });
          throw err;
        }
        process.stdout.write(`${flags.json ? JSON.stringify(outputs, null, 2) : describeOutputs(outputs)}\n`);
      });
    });

  const run = program.command("run")
    .description("Run a scenario on a docker or azure stack that is up (`ingestbench up`) and leave it up: each cell's generators run in the loadgen host's container (docker exec; on azure over SSH), the verifier counts from this machine, observers read each container's cgroup. A cell needing other components or settings is re-deployed in place first. Results as `bench` writes them.")
    .argument("<scenario>", "scenario file")
    .requiredOption("-s, --stack <name>", "stack name, e.g. docker-4c4g");
  addRunOptions(run, "runs per cell, overriding the scenario's replicates (default 3)");
  addProgressOptions(run)
    .action(async (scenarioFile: string, flags: { stack: string; results: string; replicates?: number; duration?: string; warmup?: string; quiet?: boolean; progress?: ProgressMode }) => {
      const stack = loadDeployableStack(flags.stack, projectRoot);
      const resultsRoot = prepareResultsDir(flags.results);
      const plans = planCells(loadScenarioFile(scenarioFile), scenarioFile, { replicates: flags.replicates, duration: flags.duration, warmup: flags.warmup });
      const reporter = new Progress(flags.quiet ? "quiet" : flags.progress);
      const result = await benchOnPulumiStack({ stack, plans, resultsRoot, invocation: new Date().toISOString(), projectRoot, quiet: reporter.mode === "quiet", reporter, keep: true });
      process.exitCode = runsExitCode(result);
    });

  program.command("down")
    .description("Destroy a docker or azure stack's resources (pulumi destroy). --cancel first releases a lock left by a killed update (pulumi cancel): only when no update is running.")
    .requiredOption("-s, --stack <name>", "stack name, e.g. docker-4c4g")
    .option("--cancel", "release a stale lock (pulumi cancel) before destroying")
    .option("-q, --quiet", "no Pulumi progress output")
    .action(async (flags: { stack: string; cancel?: boolean; quiet?: boolean }) => {
      const stack = loadDeployableStack(flags.stack, projectRoot);
      const ws = await openWorkspace({ projectDir: projectRoot });
      const p = await PulumiProvisioner.inWorkspace(ws, stack.name, { projectDir: projectRoot, ...progress(flags.quiet) }, "select");
      await p.destroy({ cancelStaleLock: Boolean(flags.cancel) });
      process.stdout.write(`stack ${stack.name}: destroyed\n`);
    });

  const gc = program.commands.find((c) => c.name() === "gc");
  if (!gc) throw new Error("registerProvisionCommands: the program has no gc command to extend");
  gc.description(`${gc.description()} Then destroys the project's Pulumi stacks (docker, azure) whose last update is older than their ingestbench:expiry (default 4h); without a Pulumi CLI that part is skipped and says why.`)
    .option("--dry-run", "only list the Pulumi stacks past their expiry; local leftovers are not collected")
    .action(async (flags: { all?: boolean; dryRun?: boolean }) => {
      const local = flags.dryRun
        ? { skipped: "--dry-run: local leftovers are not collected" }
        : await collectLeftovers({ all: Boolean(flags.all) });
      const pulumi = await collectExpiredStacks({ projectDir: projectRoot, dryRun: Boolean(flags.dryRun) });
      process.stdout.write(`${JSON.stringify({ ...local, pulumi }, null, 2)}\n`);
      if (pulumi.errors.length > 0) process.exitCode = 3;
    });
}
