/**
 * The commands of docker and azure stacks (deployed with Pulumi's Automation API, ./provisioner.ts):
 *
 *   ingestbench up    --stack S [--scenario F [--cell C]]   deploy S (with a scenario cell's components); it stays up
 *   ingestbench run   --stack S SCENARIO                    run a scenario on the deployed S
 *   ingestbench down  --stack S [--cancel]                  destroy S (--cancel: first release a stale lock)
 *   ingestbench gc    [--all] [--dry-run]                   local leftovers, plus Pulumi stacks past their expiry
 *   ingestbench bench --stack S SCENARIO                    up → run → down, destroyed on success, error and Ctrl-C
 *                                                           (benchOnPulumiStack, called by the bench command)
 *
 * Running a scenario's load on a deployed stack is NOT implemented: the generators have to run on the stack's
 * loadgen host (a container or VM), which needs remote execution (docker exec / SSH) that cannot be tested on this
 * machine. What is implemented is everything up to it: deploying the cell's components, reading the outputs and
 * resolving where generators write and verifiers count (outputs.ts runTargets). `run` and `bench` stop with
 * E_NOT_IMPLEMENTED naming those targets, `bench` before deploying anything; a CellRunner can be passed in.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import type { StackOutputs } from "../../infra/docker/outputs.ts";
import type { StackSpec } from "../../infra/limits.ts";
import { collectLeftovers } from "../../infra/local/gc.ts";
import { loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError, IngestbenchError, ProvisioningError } from "../errors.ts";
import type { RunRecord } from "../results/types.ts";
import type { DriveResult } from "../runner/drive.ts";
import { describeRun } from "../runner/drive.ts";
import { loadScenarioFile, planCells } from "../runner/plan.ts";
import type { CellPlan } from "../runner/run.ts";
import { collectExpiredStacks } from "./gc.ts";
import { installInterruptHandlers, interruptedExitCode } from "./interrupt.ts";
import { runTargets, type RunTargets } from "./outputs.ts";
import { cellConfig, openWorkspace, PulumiProvisioner, withPulumiStack, type CellComponents } from "./provisioner.ts";

const defaultProjectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** What a CellRunner gets: the deployed stack, the cell, and where its load goes. */
export interface CellRunContext {
  stack: StackSpec;
  plan: CellPlan;
  outputs: StackOutputs;
  targets: RunTargets;
  signal: AbortSignal;
  resultsRoot: string;
  invocation: string;
  projectRoot: string;
}

/** Runs one cell's load on a deployed stack and returns its record (generators on the loadgen host, verifiers on the sink). */
export type CellRunner = (ctx: CellRunContext) => Promise<RunRecord>;

/** The components of a cell. */
function componentsOf(plan: CellPlan): CellComponents {
  return { sink: plan.sink.name, collector: plan.collector?.name ?? null };
}

function describeTargets(t: RunTargets): string {
  const one = (x: RunTargets["sink"]) =>
    `${x.component} on ${x.host} at ${x.inStack.host}:${x.inStack.port} (${x.inStack.scheme})` +
    (x.fromHarness ? `, from this machine ${x.fromHarness.host}:${x.fromHarness.port}` : "");
  return `generators → ${one(t.entry)}; verifier → ${one(t.sink)}`;
}

/** The error of a run without a CellRunner: what is missing, and the targets it would have used. */
function notImplemented(stack: StackSpec, targets: string[]): IngestbenchError {
  // exit 3 (a run error), not 1: 1 means a check failed
  return new ProvisioningError(
    "E_NOT_IMPLEMENTED",
    `stack ${stack.name} (${stack.platform}): running a scenario's load on a docker or azure stack is not implemented yet: ` +
      "the generators must run on the stack's loadgen host (docker exec / SSH), which this version cannot do. " +
      "Deploying, outputs and teardown work (`ingestbench up|down --stack S`)." +
      (targets.length ? `\n${targets.map((t) => `  ${t}`).join("\n")}` : ""),
  );
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

/** Options of benchOnPulumiStack. */
export interface PulumiBenchOptions {
  /** a docker or azure stack */
  stack: StackSpec;
  plans: CellPlan[];
  resultsRoot: string;
  invocation: string;
  projectRoot?: string;
  quiet?: boolean;
  /** where the `pulumi` CLI is found and what it runs with; default process.env */
  env?: NodeJS.ProcessEnv;
  /** runs each cell; without one the bench stops with E_NOT_IMPLEMENTED before deploying anything */
  runCell?: CellRunner;
  /** aborts the bench (default: SIGINT/SIGTERM of this process) */
  signal?: AbortSignal;
}

/**
 * `ingestbench bench` on a docker or azure stack: deploy it with the first cell's components, run every planned
 * cell (re-deploying in place when a cell needs other components), and destroy it after success, error and Ctrl-C.
 * Runs are printed as describeRun does for local runs. Returns what driveRuns returns, for runsExitCode.
 * @throws ConfigurationError for a local stack or a cell needing hosts the stack lacks; IngestbenchError
 *         E_NOT_IMPLEMENTED without runCell; ProvisioningError when deploying fails (after the destroy)
 */
export async function benchOnPulumiStack(opts: PulumiBenchOptions): Promise<DriveResult> {
  const { stack, plans } = opts;
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  if (stack.platform === "local") throw new ConfigurationError("E_PLATFORM", `stack ${stack.name}: benchOnPulumiStack is for docker and azure stacks`);
  const configs = plans.map((plan) => cellConfig(stack, plan)); // host checks before anything runs
  const runCell = opts.runCell;
  if (!runCell) throw notImplemented(stack, []);
  if (plans.length === 0) return { records: [], interrupted: null };

  const records: RunRecord[] = [];
  const body = async (signal: AbortSignal): Promise<void> => {
    const log = opts.quiet ? undefined : (t: string) => void process.stderr.write(t);
    const provisioner = await PulumiProvisioner.open(stack.name, { projectDir: projectRoot, ...(opts.env ? { env: opts.env } : {}), ...(log ? { onOutput: log } : {}) });
    // a cell whose stack config differs (components or blocks, e.g. another chunk_limit_records) is re-deployed
    const key = (i: number) => JSON.stringify(configs[i]);
    let deployed = key(0);
    await withPulumiStack(provisioner, { config: configs[0]!, signal }, async (first) => {
      let outputs = first;
      for (const [i, plan] of plans.entries()) {
        if (signal.aborted) break;
        if (key(i) !== deployed) {
          outputs = await provisioner.up({ config: configs[i]!, signal });
          deployed = key(i);
        }
        const targets = runTargets(outputs, componentsOf(plan));
        const record = await runCell({ stack, plan, outputs, targets, signal, resultsRoot: opts.resultsRoot, invocation: opts.invocation, projectRoot });
        process.stdout.write(`${describeRun(record)}\n`);
        records.push(record);
      }
    });
  };

  // an interrupted bench returns the runs made so far (the stack has been destroyed by then)
  const handle = opts.signal ? undefined : installInterruptHandlers();
  const signal = opts.signal ?? handle!.signal;
  const interrupted = (): NodeJS.Signals | null => (signal.aborted ? ((signal.reason as NodeJS.Signals | undefined) ?? "SIGINT") : null);
  try {
    await body(signal);
    return { records, interrupted: interrupted() };
  } catch (err) {
    if (signal.aborted) return { records, interrupted: interrupted() };
    throw err;
  } finally {
    handle?.dispose();
  }
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

  program.command("run")
    .description("Run a scenario on a docker or azure stack that is already up (`ingestbench up`). Checks that the stack runs the scenario's components and resolves where generators write and verifiers count; running the load on the stack's loadgen host is not implemented yet (exits 1 saying so).")
    .argument("<scenario>", "scenario file")
    .requiredOption("-s, --stack <name>", "stack name, e.g. docker-4c4g")
    .action(async (scenarioFile: string, flags: { stack: string }) => {
      const stack = loadDeployableStack(flags.stack, projectRoot);
      const plans = planCells(loadScenarioFile(scenarioFile), scenarioFile);
      for (const plan of plans) cellConfig(stack, plan);
      const ws = await openWorkspace({ projectDir: projectRoot });
      const p = await PulumiProvisioner.inWorkspace(ws, stack.name, { projectDir: projectRoot }, "select");
      const outputs = await p.outputs();
      const targets = [...new Map(plans.map((plan) => [plan.cell, plan])).values()].map(
        (plan) => `cell ${plan.cell}: ${describeTargets(runTargets(outputs, componentsOf(plan)))}`,
      );
      throw notImplemented(stack, targets);
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
